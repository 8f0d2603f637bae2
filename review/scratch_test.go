package review_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd/review"
)

// TestAutobuildPrunesOldScratch: autobuild keeps each scratch copy for
// its caller to inspect, and nothing removed them: a team's copies piled
// up under --scratch, a workspace each. A run now first removes the
// copies older than ScratchMaxAge, and only those: a young copy, a
// directory of another name, and a symbolic link named like a copy (and
// the old directory it points to) stay.
func TestAutobuildPrunesOldScratch(t *testing.T) {
	e := newEnv(t)
	e.fake.SetScript(player(99))
	scratch := scratchBase(t)
	old := time.Now().Add(-review.ScratchMaxAge - time.Hour)
	mk := func(name string, at time.Time) string {
		dir := filepath.Join(scratch, name)
		if err := os.MkdirAll(filepath.Join(dir, "pkg"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "pkg", "a.go"), []byte("package pkg\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(dir, at, at); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	stale := mk("coachd-autobuild-111", old)
	young := mk("coachd-autobuild-222", time.Now().Add(-time.Hour))
	other := mk("notes-from-last-week", old)
	target := mk("linked-target", old)
	link := filepath.Join(scratch, "coachd-autobuild-link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(target, old, old); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	b := &review.Build{Reviewer: e.rv, MaxTurns: 1, Log: &log}
	res, _ := b.Run(context.Background(), e.user, "TASK-001", requirements, sample(t, false), scratch)
	if res == nil || !strings.HasPrefix(filepath.Base(res.Dir), "coachd-autobuild-") {
		t.Fatalf("build %+v", res)
	}
	if _, err := os.Lstat(stale); !os.IsNotExist(err) {
		t.Errorf("the copy older than %s is still there (%v)", review.ScratchMaxAge, err)
	}
	for _, keep := range []string{young, other, link, filepath.Join(target, "pkg", "a.go"), res.Dir} {
		if _, err := os.Lstat(keep); err != nil {
			t.Errorf("%s was removed: %v", keep, err)
		}
	}
	if !strings.Contains(log.String(), "removed 1 copies") {
		t.Errorf("the log does not say it removed a copy:\n%s", log.String())
	}
}

// TestSharedAboveWorkspace: a workspace had no check at all, where the
// scratch directory is refused when another user may write to it or
// above it: the tests run in the workspace and read what they find above
// it. SharedAbove names the directory others may write (a warning for
// the CLI and serve: a repository under /tmp is everyday), and says
// nothing of a private one.
func TestSharedAboveWorkspace(t *testing.T) {
	base := scratchBase(t)
	private := filepath.Join(base, "repo")
	shared := filepath.Join(base, "team", "repo")
	for _, d := range []string{private, shared} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(base, "team"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := review.SharedAbove(private); err != nil {
		t.Errorf("a private workspace: %v", err)
	}
	err := review.SharedAbove(shared)
	if err == nil || !strings.Contains(err.Error(), "the workspace") || !strings.Contains(err.Error(), filepath.Join(base, "team")+" may be written by other users") {
		t.Errorf("a workspace in a directory all may write: %v", err)
	}
}

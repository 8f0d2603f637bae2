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

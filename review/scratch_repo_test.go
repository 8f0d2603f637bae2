package review_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/review"
)

// TestAutobuildCopyInsideRepo: a workspace with no repository of its
// own was copied as it was, so a git command run in the copy found the
// first repository above it: the scratch directory's, when that is in
// one (a home directory kept in git, --scratch inside a checkout). The
// worker's test that commits the work tree committed the copy there. A
// copy with no .git now gets a repository of its own, and the one above
// it is byte for byte as it was.
func TestAutobuildCopyInsideRepo(t *testing.T) {
	e := newEnv(t)
	scratch := scratchBase(t)
	if err := os.WriteFile(filepath.Join(scratch, "README"), []byte("dotfiles\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	gitCommitAll(t, scratch)
	before := treeSum(t, filepath.Join(scratch, ".git"))
	e.fake.SetScript(func(req *anthropictest.Request) anthropictest.Reply {
		if isPlayer(req) {
			return committingPlayer(req, `{"files_modified":["hide_test.go"],"tests_written":[]}`, [2]string{"hide_test.go", hideTest})
		}
		return anthropictest.Text("No decision.", 5)
	})
	b := &review.Build{Reviewer: e.rv, MaxTurns: 1}
	res, _ := b.Run(context.Background(), e.user, "TASK-001", requirements, sample(t, false), scratch)
	if res == nil || res.Dir == "" {
		t.Fatal("no build")
	}
	if after := treeSum(t, filepath.Join(scratch, ".git")); after != before {
		log, _ := exec.Command("git", "-C", scratch, "log", "--oneline", "--stat").CombinedOutput()
		t.Errorf("the repository above the copy changed during the build:\n%s", log)
	}
	if fi, err := os.Lstat(filepath.Join(res.Dir, ".git")); err != nil || !fi.IsDir() {
		t.Errorf("the copy has no repository of its own (%v)", err)
	}
	if log, _ := exec.Command("git", "-C", res.Dir, "log", "--oneline").CombinedOutput(); !strings.Contains(string(log), "tidy") {
		t.Errorf("the worker's commit is not in the copy's own repository: %s", log)
	}
}

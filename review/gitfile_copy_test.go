package review_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/review"
)

// TestAutobuildWorktreeCopyOwnRepo: a workspace that is a git worktree
// (or a submodule) has a .git file, "gitdir: /…/.git/worktrees/x", and
// the scratch copy kept it, so every git command run in the copy — here
// the worker's test that commits the work tree — acted on the user's own
// repository: its branch moved, its index and reflog were rewritten. The
// copy now leaves such a pointer out and has a repository of its own,
// the workspace as the build began, which the coach's git_diff compares
// with; the user's repository is byte for byte as it was, and the
// build's diff shows neither repository's files.
func TestAutobuildWorktreeCopyOwnRepo(t *testing.T) {
	e := newEnv(t)
	main := sample(t, false)
	gitCommitAll(t, main)
	wt := filepath.Join(t.TempDir(), "wt")
	if out, err := exec.Command("git", "-C", main, "worktree", "add", "-q", "-b", "task", wt).CombinedOutput(); err != nil {
		t.Fatalf("git worktree add: %v %s", err, out)
	}
	before := treeSum(t, filepath.Join(main, ".git"))
	var diff string
	e.fake.SetScript(func(req *anthropictest.Request) anthropictest.Reply {
		if isPlayer(req) {
			return committingPlayer(req, `{"files_modified":["slug.go"],"tests_written":[]}`, [2]string{"slug.go", fixedSlug}, [2]string{"hide_test.go", hideTest})
		}
		switch step(req) {
		case 0:
			return anthropictest.Blocks(anthropictest.ToolUse("toolu_g", "git_diff", `{}`))
		case 1:
			diff = lastResult(req).ResultText()
			return anthropictest.Blocks(anthropictest.ToolUse("toolu_v", "validate_implementation",
				`{"task_id":"TASK-001","requirements":["Slugify lowercases"],"player_report":{"files_modified":["slug.go"]}}`))
		case 2:
			return anthropictest.Blocks(anthropictest.ToolUse("toolu_d", "record_decision", decisionJSON("feedback")))
		}
		return anthropictest.Text(decisionJSON("feedback"), 40)
	})
	var log strings.Builder
	b := &review.Build{Reviewer: e.rv, MaxTurns: 1, Log: &log}
	res, _ := b.Run(context.Background(), e.user, "TASK-001", requirements, wt, scratchBase(t))
	if res == nil || res.Dir == "" {
		t.Fatalf("no build:\n%s", log.String())
	}
	if after := treeSum(t, filepath.Join(main, ".git")); after != before {
		branches, _ := exec.Command("git", "-C", main, "log", "--oneline", "task").CombinedOutput()
		t.Errorf("the user's repository changed during the build; branch task:\n%s", branches)
	}
	if fi, err := os.Lstat(filepath.Join(res.Dir, ".git")); err != nil || !fi.IsDir() {
		t.Errorf("the copy has no repository of its own (%v)", err)
	}
	if !strings.Contains(diff, "slug.go") || !strings.Contains(diff, "dash") {
		t.Errorf("the coach's git_diff in the copy: %q", diff)
	}
	if strings.Contains(res.Diff, ".git") || !strings.Contains(res.Diff, "+++ b/slug.go") {
		t.Errorf("the build's diff shows the repository's files, or not the player's:\n%s", res.Diff)
	}
	if !strings.Contains(log.String(), ".git") {
		t.Errorf("the log does not say the .git file was left out:\n%s", log.String())
	}
}

// treeSum is a digest of every file's path, mode and bytes under dir.
func treeSum(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %v\n", p, info.Mode())
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

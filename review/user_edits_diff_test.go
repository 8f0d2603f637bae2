package review_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/review"
)

// TestAutobuildDiffLeavesUserEdits: the user starts a build from a
// repository with edits of their own not yet committed (a changed
// REQUIREMENTS.md, a new notes file). The coach's git_diff compared the
// scratch copy with its HEAD commit, so it showed the user's edits as
// the player's work. It now compares with the workspace as it was when
// the build began: only what the player changed.
func TestAutobuildDiffLeavesUserEdits(t *testing.T) {
	e := newEnv(t)
	src := sample(t, false)
	gitCommitAll(t, src)
	f, err := os.OpenFile(filepath.Join(src, "REQUIREMENTS.md"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\nUSER-OWN-EDIT: a note the user has not committed yet.\n")
	f.Close()
	if err := os.WriteFile(filepath.Join(src, "notes.txt"), []byte("USER-UNTRACKED first line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var diff string
	e.fake.SetScript(func(req *anthropictest.Request) anthropictest.Reply {
		if isPlayer(req) {
			switch step(req) {
			case 0:
				in, _ := json.Marshal(map[string]string{"path": "slug.go", "content": fixedSlug})
				return anthropictest.Blocks(anthropictest.ToolUse("toolu_w1", "write_file", string(in)))
			case 1:
				// The player edits the user's untracked file too: that
				// change is the player's.
				in, _ := json.Marshal(map[string]string{"path": "notes.txt", "content": "USER-UNTRACKED first line\nPLAYER-LINE\n"})
				return anthropictest.Blocks(anthropictest.ToolUse("toolu_w2", "write_file", string(in)))
			}
			return anthropictest.Text(`{"files_modified":["slug.go","notes.txt"],"tests_written":[]}`, 20)
		}
		if step(req) == 0 {
			return anthropictest.Blocks(anthropictest.ToolUse("toolu_g", "git_diff", `{}`))
		}
		if step(req) == 1 {
			diff = lastResult(req).ResultText()
		}
		return anthropictest.Text("No decision.", 5)
	})
	b := &review.Build{Reviewer: e.rv, MaxTurns: 1}
	res, _ := b.Run(context.Background(), e.user, "TASK-001", requirements, src, scratchBase(t))
	if res == nil || res.Dir == "" {
		t.Fatal("no build")
	}
	if !strings.Contains(diff, "slug.go") || !strings.Contains(diff, "dash") {
		t.Fatalf("the coach's git_diff lacks the player's change to slug.go: %q", diff)
	}
	if !strings.Contains(diff, "+PLAYER-LINE") {
		t.Errorf("the coach's git_diff lacks the player's change to notes.txt: %q", diff)
	}
	if strings.Contains(diff, "USER-OWN-EDIT") || strings.Contains(diff, "REQUIREMENTS.md") || strings.Contains(diff, "+USER-UNTRACKED") {
		t.Errorf("the coach's git_diff shows the user's own uncommitted edits as the player's: %q", diff)
	}
	// The user's repository is as it was: nothing committed, staged or
	// written into it.
	if out, _ := exec.Command("git", "-C", src, "status", "--porcelain").Output(); string(out) != " M REQUIREMENTS.md\n?? notes.txt\n" {
		t.Errorf("the user's repository changed: %q", out)
	}
}

package review

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd"
)

// TestApprovalWhenGitFails: when git could not list what the change
// touches, the list was silently empty, and the approval was checked
// against the player's files_modified alone: a record_decision left
// running past its turn's timeout (its context done, so git was never
// started), or a workspace whose repository the worker made borrow its
// objects (an empty .git/objects/info/alternates), had the approval of a
// change that added a forging conftest.py taken, no test_config_reviewed
// asked. Such an approval is now refused, as Request.Unknown refuses
// one; a feedback decision is still recorded.
func TestApprovalWhenGitFails(t *testing.T) {
	needTools(t, "git", "pytest")
	// workspace is a change that breaks add and adds a conftest.py that
	// reports the failure as a pass.
	workspace := func(t *testing.T) (map[string]coachd.Tool, *Trace, string) {
		dir := pyAddProject(t, nil)
		write(t, filepath.Join(dir, "app", "add.py"), "def add(a, b):\n    return a - b\n")
		write(t, filepath.Join(dir, "conftest.py"), forgingConftest)
		tools, tr := reviewTools(t, dir, pytestRun)
		if res := call(t, tools, ValidateTool, validatePy); res.IsError {
			t.Fatalf("validate: %s", res.Content)
		}
		if res := call(t, tools, RunCommandTool, `{"command":"`+pytestRun+`"}`); !strings.Contains(res.Content, `"exit_code":0`) {
			t.Fatalf("%s did not pass: %s", pytestRun, res.Content)
		}
		return tools, tr, dir
	}
	refused := func(t *testing.T, tr *Trace, res coachd.ToolResult) {
		t.Helper()
		if !res.IsError || !strings.Contains(res.Content, "approval refused") {
			t.Errorf("approval of a forging conftest.py git did not list: %+v, want refused", res)
		}
		if d, approved := tr.Decision(); d != nil || approved {
			t.Errorf("decision recorded: %s (approved %v), want none", d, approved)
		}
	}
	t.Run("ErrDecisionPastTimeout", func(t *testing.T) {
		tools, tr, _ := workspace(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		res, err := tools[DecisionTool].Execute(ctx, coachd.ToolCall{ID: "toolu_x", Name: DecisionTool, Input: json.RawMessage(approvePy)}, coachd.ToolEnv{})
		if err != nil {
			t.Fatal(err)
		}
		refused(t, tr, res)
	})
	t.Run("ErrBorrowedObjects", func(t *testing.T) {
		tools, tr, dir := workspace(t)
		write(t, filepath.Join(dir, ".git", "objects", "info", "alternates"), "")
		refused(t, tr, call(t, tools, DecisionTool, approvePy))
	})
	t.Run("OKFeedback", func(t *testing.T) {
		tools, tr, dir := workspace(t)
		write(t, filepath.Join(dir, ".git", "objects", "info", "alternates"), "")
		if res := call(t, tools, DecisionTool, feedbackInput); res.IsError {
			t.Fatalf("feedback: %s", res.Content)
		}
		if d, _ := tr.Decision(); d == nil {
			t.Error("feedback not recorded")
		}
	})
}

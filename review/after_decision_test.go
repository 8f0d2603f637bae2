package review

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRunAfterDecision: record_decision is the review's last call (seed
// 003: "at the END"). A test run after an approval still ran and went
// into the trace: a review stored as approved whose trace ends with a
// failed run, its verdict and its evidence disagreeing.
func TestRunAfterDecision(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	dir := goModule(t, true)
	write(t, filepath.Join(dir, "flaky_test.go"), "package m\n\nimport \"testing\"\n\nfunc TestFlaky(t *testing.T) { t.Fatal(\"flaked\") }\n")
	tools, tr := reviewTools(t, dir, "go test -run TestAdd ./...", "go test -run TestFlaky ./...")
	call(t, tools, ValidateTool, validateInput)
	if res := call(t, tools, RunCommandTool, `{"command":"go test -run TestAdd ./..."}`); res.IsError {
		t.Fatalf("run: %+v", res)
	}
	if res := call(t, tools, DecisionTool, approveInput); res.IsError {
		t.Fatalf("approve: %s", res.Content)
	}
	res := call(t, tools, RunCommandTool, `{"command":"go test -run TestFlaky ./..."}`)
	if !res.IsError || !strings.Contains(res.Content, "decision is recorded") {
		t.Errorf("a run after the decision: %s", res.Content)
	}
	if run := tr.failedTestRun(); run != nil {
		t.Errorf("the approved review's trace has a failed run after its decision: %s", run.Command)
	}
}

package review

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

// TestApprovalAfterAHungRun: the whole suite's go test hangs in the first
// package's TestMain, before any test starts, and is killed at its
// timeout: no test counts (go prints the packages in order, the others'
// wait behind it). The coach then runs the tests of another package
// alone, which pass. The whole suite did not pass in this review, and the
// approval was recorded on the narrower run.
func TestApprovalAfterAHungRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	dir := goModule(t, true)
	write(t, filepath.Join(dir, "main_test.go"), "package m\n\nimport (\n\t\"testing\"\n\t\"time\"\n)\n\n"+
		"func TestMain(m *testing.M) { time.Sleep(time.Hour) }\n")
	write(t, filepath.Join(dir, "sub", "sub_test.go"), "package sub\n\nimport \"testing\"\n\nfunc TestSub(t *testing.T) {}\n")
	tr := NewTrace("TASK-001")
	ws, err := NewWorkspace(dir, Options{Commands: []string{"go test ./...", "go test ./sub"}, Trace: tr, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() }) // the review's bytecode
	tools := map[string]coachd.Tool{}
	for _, tool := range append(ws.Tools(), DecisionTools(tr)...) {
		tools[tool.Definition().Name] = tool
	}
	if res := call(t, tools, ValidateTool, validateInput); res.IsError {
		t.Fatalf("validate: %+v", res)
	}
	if res := call(t, tools, RunCommandTool, `{"command":"go test ./..."}`); !strings.Contains(res.Content, `"timed_out":true`) {
		t.Fatalf("whole suite: %+v", res)
	}
	if res := call(t, tools, RunCommandTool, `{"command":"go test ./sub"}`); !strings.Contains(res.Content, `"exit_code":0`) {
		t.Fatalf("package sub: %+v", res)
	}
	wantRefused(t, tools, "approval accepted after the whole suite's run hung")
}

package review

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestApprovalAfterAllTestsSkipped: the validator approves only when the
// tests it ran passed, and a run whose tests were all skipped did not
// pass. The worker controls its tests: a wrong Add whose only test calls
// t.Skip makes `go test -v ./...` exit 0 with "--- SKIP" and "ok", which
// a review found accepted as a pass.
func TestApprovalAfterAllTestsSkipped(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.24\n")
	write(t, filepath.Join(dir, "add.go"), "package m\n\nfunc Add(a, b int) int { return a - b }\n")
	write(t, filepath.Join(dir, "add_test.go"), "package m\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tt.Skip(\"flaky on CI\")\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"Add(2, 3) != 5\")\n\t}\n}\n")
	tools, tr := reviewTools(t, dir, "go test -v ./...")
	if res := call(t, tools, ValidateTool, validateInput); res.IsError {
		t.Fatalf("validate: %+v", res)
	}
	res := call(t, tools, RunCommandTool, `{"command":"go test -v ./..."}`)
	if res.IsError || !strings.Contains(res.Content, "--- SKIP") {
		t.Fatalf("run: %+v", res)
	}
	run := tr.lastTestRun()
	t.Logf("exit %d tests %+v passed()=%v", run.ExitCode, *run.Tests, run.Passed())
	res = call(t, tools, DecisionTool, approveInput)
	if !res.IsError {
		t.Fatalf("approval accepted after a run in which no test passed (every test skipped): %s", res.Content)
	}
	// The refusal says why, so the model can act: it read "did not pass
	// (exit code 0, 0 failed)", as if nothing were wrong with the run.
	if !strings.Contains(res.Content, "no test passed") || !strings.Contains(res.Content, "1 skipped") {
		t.Errorf("refusal does not say that no test passed: %s", res.Content)
	}
}

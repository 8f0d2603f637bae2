package review

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestApprovalAfterSwallowedFailure: a worker's TestMain that ends with
// os.Exit(0) makes `go test ./...` (the pack's command) exit 0 and print
// only "ok": go hides a passing package's output, the failing test's
// included. The run counted as passed and the approval was recorded.
func TestApprovalAfterSwallowedFailure(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.24\n")
	write(t, filepath.Join(dir, "add.go"), "package m\n\nfunc Add(a, b int) int { return a - b }\n")
	write(t, filepath.Join(dir, "add_test.go"), "package m\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\n"+
		"func TestMain(m *testing.M) {\n\tm.Run()\n\tos.Exit(0) // \"cleanup\"\n}\n\n"+
		"func TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"Add(2, 3) != 5\")\n\t}\n}\n")
	tools, _ := reviewTools(t, dir, "go test ./...")
	if res := call(t, tools, ValidateTool, validateInput); res.IsError {
		t.Fatalf("validate: %+v", res)
	}
	res := call(t, tools, RunCommandTool, `{"command":"go test ./..."}`)
	if res.IsError || !strings.Contains(res.Content, "--- FAIL: TestAdd") {
		t.Errorf("the run does not show the failing test: %s", res.Content)
	}
	wantRefused(t, tools, "approval accepted although TestAdd failed")
}

// TestApprovalAfterFailureInCutOutput: run_command keeps the head and
// tail of a command's output, and its test counts were parsed from what
// it kept. A worker's tests that print enough before and after a failing
// test (here a TestMain that exits 0 as well) leave its "--- FAIL" in the
// part cut: no failure was counted and the approval was recorded.
func TestApprovalAfterFailureInCutOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.24\n")
	write(t, filepath.Join(dir, "add.go"), "package m\n\nfunc Add(a, b int) int { return a - b }\n")
	write(t, filepath.Join(dir, "add_test.go"), "package m\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"strings\"\n\t\"testing\"\n)\n\n"+
		"var noise = strings.Repeat(\"progress: still fine\\n\", 2000)\n\n"+
		"func TestMain(m *testing.M) {\n\tm.Run()\n\tfmt.Print(noise)\n\tos.Exit(0)\n}\n\n"+
		"func TestA(t *testing.T) { fmt.Print(noise) }\n\n"+
		"func TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"Add(2, 3) != 5\")\n\t}\n}\n\n"+
		"func TestZ(t *testing.T) { fmt.Print(noise) }\n")
	tools, tr := reviewTools(t, dir, "go test ./...")
	if res := call(t, tools, ValidateTool, validateInput); res.IsError {
		t.Fatalf("validate: %+v", res)
	}
	res := call(t, tools, RunCommandTool, `{"command":"go test ./..."}`)
	if res.IsError || !strings.Contains(res.Content, "bytes cut") {
		t.Fatalf("the run's output was not cut: %.500s", res.Content)
	}
	if run := tr.lastTestRun(); run == nil || run.Tests == nil || run.Tests.Failed != 1 || run.Tests.Passed != 2 {
		t.Errorf("counts %+v, want 2 passed and 1 failed", run.Tests)
	}
	wantRefused(t, tools, "approval accepted although TestAdd failed")
}

// TestApprovalWhenNoTestRan: the worker's code can end the test binary
// before any test runs (an init that calls os.Exit(0) when it runs under
// go test): go test prints "ok" and exits 0, with no test line although
// it runs verbose. A run whose packages were "ok" counted as passed
// without one test seen to pass, and the approval was recorded.
func TestApprovalWhenNoTestRan(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.24\n")
	write(t, filepath.Join(dir, "add.go"), "package m\n\nimport (\n\t\"os\"\n\t\"strings\"\n)\n\n"+
		"func init() {\n\tif strings.HasSuffix(os.Args[0], \".test\") {\n\t\tos.Exit(0)\n\t}\n}\n\n"+
		"func Add(a, b int) int { return a - b }\n")
	write(t, filepath.Join(dir, "add_test.go"), addTestFile)
	tools, _ := reviewTools(t, dir, "go test ./...")
	if res := call(t, tools, ValidateTool, validateInput); res.IsError {
		t.Fatalf("validate: %+v", res)
	}
	// The binary exits 0 but the testing package never ended its run:
	// the run's test program reports it failed.
	if res := call(t, tools, RunCommandTool, `{"command":"go test ./..."}`); res.IsError || !strings.Contains(res.Content, `"exit_code":1`) {
		t.Fatalf("run: %+v", res)
	}
	wantRefused(t, tools, "approval accepted although no test ran")
}

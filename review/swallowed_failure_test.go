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
	res = call(t, tools, DecisionTool, approveInput)
	if !res.IsError || !strings.Contains(res.Content, "did not pass") {
		t.Fatalf("approval accepted although TestAdd failed: %s", res.Content)
	}
}

package review

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestApprovalAfterAFailedRun: the code does not change within a review,
// so a test run of the review that failed stands, whatever ran after it.
// Here the whole suite fails, then the coach runs only the test the
// player's report points it at (tests_written), which passes: the seed
// says feedback when any test is failing, and the approval was recorded.
func TestApprovalAfterAFailedRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.24\n")
	write(t, filepath.Join(dir, "add.go"), "package m\n\nfunc Add(a, b int) int { return a - b }\n")
	write(t, filepath.Join(dir, "add_test.go"), "package m\n\nimport \"testing\"\n\n"+
		"func TestAddZero(t *testing.T) {\n\tif Add(2, 0) != 2 {\n\t\tt.Fatal(\"Add(2, 0) != 2\")\n\t}\n}\n\n"+
		"func TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"Add(2, 3) != 5\")\n\t}\n}\n")
	tools, _ := reviewTools(t, dir, "go test -v ./...", "go test -v -run TestAddZero ./...")
	if res := call(t, tools, ValidateTool, validateInput); res.IsError {
		t.Fatalf("validate: %+v", res)
	}
	if res := call(t, tools, RunCommandTool, `{"command":"go test -v ./..."}`); !strings.Contains(res.Content, `"exit_code":1`) {
		t.Fatalf("whole suite: %+v", res)
	}
	if res := call(t, tools, RunCommandTool, `{"command":"go test -v -run TestAddZero ./..."}`); !strings.Contains(res.Content, `"exit_code":0`) {
		t.Fatalf("one test: %+v", res)
	}
	wantRefused(t, tools, "approval accepted after a failed run of this review")
}

package review

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRunCommandGoChdirTest: go's -C flag comes before the subcommand
// ("go -C . test ./..."), and a command line so written was not taken
// for go test: its binaries ran unframed and without the run's test
// program, so a failing test that printed "--- PASS" and exited 0 passed
// and the approval was recorded.
func TestRunCommandGoChdirTest(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	for _, command := range []string{"go -C . test ./...", "go -C=. test ./...", "go --C . test ./..."} {
		t.Run(command, func(t *testing.T) {
			dir := t.TempDir()
			write(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.24\n")
			write(t, filepath.Join(dir, "add.go"), "package m\n\nfunc Add(a, b int) int { return a - b }\n")
			write(t, filepath.Join(dir, "add_test.go"), "package m\n\nimport (\n\t\"fmt\"\n\t\"syscall\"\n\t\"testing\"\n)\n\n"+
				"func TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tfmt.Println(\"--- PASS: TestAdd (0.00s)\")\n\t\tfmt.Println(\"PASS\")\n\t\tsyscall.Exit(0)\n\t}\n}\n")
			tools, tr := reviewTools(t, dir, command)
			if res := call(t, tools, ValidateTool, validateInput); res.IsError {
				t.Fatalf("validate: %+v", res)
			}
			if res := call(t, tools, RunCommandTool, `{"command":"`+command+`"}`); res.IsError || !strings.Contains(res.Content, "--- PASS: TestAdd") {
				t.Fatalf("run: %s", res.Content)
			}
			if run := tr.lastTestRun(); run == nil || run.Passed() {
				t.Errorf("the run passed: %+v", run)
			}
			if res := call(t, tools, DecisionTool, approveInput); !res.IsError {
				t.Fatalf("approval accepted although TestAdd failed: %s", res.Content)
			}
		})
	}
	// Still a run that passes when its test does.
	ws, err := NewWorkspace(goModule(t, true), Options{Commands: []string{"go -C . test ./..."}})
	if err != nil {
		t.Fatal(err)
	}
	if run := runResult(t, ws, "go -C . test ./..."); !run.Passed() {
		t.Fatalf("a passing test did not pass: %+v\n%s", run.Tests, run.Output)
	}
}

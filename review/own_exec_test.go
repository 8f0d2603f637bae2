package review

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRunCommandOwnExec: an allowed go test command line that names its
// own -exec program replaced the run's (go test keeps the last -exec),
// so a test binary that printed the framed PASS lines and exited 0 passed
// again, and the approval was recorded. A go test flag that takes the
// run's place (-exec, -memprofile, whose file is the run's end-of-run
// proof) is refused, and says why.
func TestRunCommandOwnExec(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	for _, command := range []string{
		"go test -exec=env ./...",
		"go test -exec env ./...",
		"go test ./... --exec=env",
		"go -C . test -exec=env ./...",
		"go test -memprofile=mem.out ./...",
		"go test -test.memprofile mem.out ./...",
		"go test ./... -args -test.memprofile=mem.out",
	} {
		t.Run(command, func(t *testing.T) {
			dir := t.TempDir()
			write(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.24\n")
			write(t, filepath.Join(dir, "add.go"), "package m\n\nfunc Add(a, b int) int { return a - b }\n")
			write(t, filepath.Join(dir, "add_test.go"), "package m\n\nimport (\n\t\"fmt\"\n\t\"syscall\"\n\t\"testing\"\n)\n\n"+
				"func TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tfmt.Print(\"\\x16--- PASS: TestAdd (0.00s)\\n\\x16PASS\\n\")\n\t\tsyscall.Exit(0)\n\t}\n}\n")
			tools, tr := reviewTools(t, dir, command)
			if res := call(t, tools, ValidateTool, validateInput); res.IsError {
				t.Fatalf("validate: %+v", res)
			}
			res := call(t, tools, RunCommandTool, `{"command":"`+command+`"}`)
			if !res.IsError || !strings.Contains(res.Content, "the run's own") {
				t.Errorf("run not refused: %s", res.Content)
			}
			if run := tr.lastTestRun(); run != nil {
				t.Errorf("a run was traced: %+v\n%s", run.Tests, run.Output)
			}
			if res := call(t, tools, DecisionTool, approveInput); !res.IsError {
				t.Fatalf("approval accepted although TestAdd failed: %s", res.Content)
			}
		})
	}
}

package review

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestApprovalNeedsTheChangedPackagesTested: the seed approves only when
// all tests pass and the coach ran them itself. The player changed the
// root package (add.go); the coach ran the tests of another package
// alone (sub), which pass, and the approval was recorded: the changed
// code's tests never ran. The packages changed are those of the files
// the player's report names and, in a git workspace, those git shows
// changed or added (whatever the report says).
func TestApprovalNeedsTheChangedPackagesTested(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	module := func(t *testing.T) string {
		dir := goModule(t, true)
		write(t, filepath.Join(dir, "sub", "sub.go"), "package sub\n\nfunc One() int { return 1 }\n")
		write(t, filepath.Join(dir, "sub", "sub_test.go"), "package sub\n\nimport \"testing\"\n\nfunc TestOne(t *testing.T) {\n\tif One() != 1 {\n\t\tt.Fatal(One())\n\t}\n}\n")
		return dir
	}
	approve := func(t *testing.T, dir, validate string, runs ...string) string {
		t.Helper()
		tools, tr := reviewTools(t, dir, "go test ./sub", "go test ./...")
		if res := call(t, tools, ValidateTool, validate); res.IsError {
			t.Fatalf("validate: %+v", res)
		}
		for _, c := range runs {
			if res := call(t, tools, RunCommandTool, `{"command":"`+c+`"}`); !strings.Contains(res.Content, `"exit_code":0`) {
				t.Fatalf("%s: %s", c, res.Content)
			}
		}
		res := call(t, tools, DecisionTool, approveInput)
		if d, approved := tr.Decision(); approved != !res.IsError {
			t.Fatalf("recorded %s, told %+v", d, res)
		}
		if res.IsError {
			return res.Content
		}
		return ""
	}
	t.Run("ErrReportedPackageUntested", func(t *testing.T) {
		got := approve(t, module(t), validateInput, "go test ./sub")
		if !strings.Contains(got, "example.com/m") || strings.Contains(got, "example.com/m/sub") {
			t.Errorf("approval after only an untouched package's tests ran: %q, want refused naming example.com/m", got)
		}
	})
	t.Run("ErrGitChangeUnreported", func(t *testing.T) {
		if _, err := exec.LookPath("git"); err != nil {
			t.Skip("git is not installed")
		}
		dir := module(t)
		for _, argv := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "start"}} {
			cmd := exec.Command("git", argv...)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v %s", argv, err, out)
			}
		}
		// The worker changed the root package and added one; its report
		// names only sub.
		write(t, filepath.Join(dir, "add.go"), "package m\n\n// Add adds.\nfunc Add(a, b int) int { return b + a }\n")
		write(t, filepath.Join(dir, "extra", "extra.go"), "package extra\n\nfunc Two() int { return 2 }\n")
		write(t, filepath.Join(dir, "extra", "extra_test.go"), "package extra\n\nimport \"testing\"\n\nfunc TestTwo(t *testing.T) {}\n")
		lying := strings.Replace(validateInput, `"files_modified":["add.go"]`, `"files_modified":["sub/sub.go"]`, 1)
		got := approve(t, dir, lying, "go test ./sub")
		if !strings.Contains(got, "example.com/m,") && !strings.Contains(got, "example.com/m ") || !strings.Contains(got, "example.com/m/extra") {
			t.Errorf("approval with the changed packages untested: %q, want refused naming example.com/m and example.com/m/extra", got)
		}
	})
	t.Run("OKNoTestFiles", func(t *testing.T) {
		// A changed package with no tests is covered by the run that
		// lists it ("[no test files]"): whether tests are missing is
		// the coach's to judge, from the code.
		dir := module(t)
		write(t, filepath.Join(dir, "cmd", "tool", "main.go"), "package main\n\nfunc main() {}\n")
		validate := strings.Replace(validateInput, `"files_modified":["add.go"]`, `"files_modified":["cmd/tool/main.go"]`, 1)
		if got := approve(t, dir, validate, "go test ./sub"); !strings.Contains(got, "example.com/m/cmd/tool") {
			t.Errorf("approval with the changed package left out of every run: %q", got)
		}
		if got := approve(t, dir, validate, "go test ./sub", "go test ./..."); got != "" {
			t.Errorf("approval after a run listing the changed package refused: %s", got)
		}
	})
	t.Run("OK", func(t *testing.T) {
		if got := approve(t, module(t), validateInput, "go test ./sub", "go test ./..."); got != "" {
			t.Errorf("approval after the whole suite passed refused: %s", got)
		}
	})
}

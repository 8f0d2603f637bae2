package review

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestApprovalOnHugeChange: the harness check reads what git lists
// changed or untracked, and read it through run_command's output cap,
// its first and last 16 KiB. A worker that put 2,000 junk files before a
// forging conftest.py, in git's order, and 2,000 after had it fall in
// the cut middle: no test_config_reviewed was asked, and the coach's
// honest pytest run, which the conftest.py turned from a failure into a
// pass, approved the change. git's list is now read whole (bounded:
// maxGitList), the untracked files of node_modules and the like, which
// no check reads, dropped as read: a change with a large untracked
// node_modules stays approvable.
func TestApprovalOnHugeChange(t *testing.T) {
	if testing.Short() {
		t.Skip("runs pytest")
	}
	for _, tool := range []string{"git", "pytest"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("SKIPPED: %s is not installed", tool)
		}
	}
	const (
		pytest   = "pytest -q -p no:cacheprovider"
		validate = `{"task_id":"TASK-001","requirements":["Add adds"],"player_report":{"files_modified":["app/add.py"]}}`
		approve  = `{"task_id":"TASK-001","decision":"approve","rationale":"Add adds; the suite passes.",` +
			`"requirements_verified":[{"requirement":"Add adds","status":"met","evidence":"test_add passes"}]}`
	)
	workspace := func(t *testing.T, add string) string {
		dir := t.TempDir()
		write(t, filepath.Join(dir, "app", "__init__.py"), "")
		write(t, filepath.Join(dir, "app", "add.py"), "def add(a, b):\n    return a + b\n")
		write(t, filepath.Join(dir, "tests", "test_add.py"), "from app.add import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
		write(t, filepath.Join(dir, "pytest.ini"), "[pytest]\npythonpath = .\ntestpaths = tests\n")
		gitIn(t, dir, "init", "-q")
		gitIn(t, dir, "add", "-A")
		gitIn(t, dir, "commit", "-q", "-m", "start")
		write(t, filepath.Join(dir, "app", "add.py"), "def add(a, b):\n    return "+add+"\n")
		return dir
	}
	decide := func(t *testing.T, dir string) string {
		t.Helper()
		tools, _ := reviewTools(t, dir, pytest)
		if res := call(t, tools, ValidateTool, validate); res.IsError {
			t.Fatalf("validate: %s", res.Content)
		}
		if res := call(t, tools, RunCommandTool, `{"command":"`+pytest+`"}`); !strings.Contains(res.Content, `"exit_code":0`) {
			t.Fatalf("%s did not pass: %s", pytest, res.Content)
		}
		if res := call(t, tools, DecisionTool, approve); res.IsError {
			return res.Content
		}
		return ""
	}
	t.Run("ErrConftestInTheMiddle", func(t *testing.T) {
		dir := workspace(t, "a - b")
		for i := range 2000 {
			write(t, filepath.Join(dir, "aaa", fmt.Sprintf("junk_%04d.py", i)), "")
			write(t, filepath.Join(dir, "zzz", fmt.Sprintf("junk_%04d.py", i)), "")
		}
		write(t, filepath.Join(dir, "conftest.py"), forgingConftest)
		if got := decide(t, dir); !strings.Contains(got, "conftest.py") || !strings.Contains(got, "test_config_reviewed") {
			t.Errorf("approval over a forging conftest.py amid 4,000 junk files: %q, want refused naming it", got)
		}
	})
	t.Run("OKLargeNodeModules", func(t *testing.T) {
		dir := workspace(t, "a + b")
		for i := range 3000 {
			pkg := filepath.Join(dir, "node_modules", fmt.Sprintf("dependency-number-%04d", i))
			write(t, filepath.Join(pkg, "package.json"), `{"name":"x"}`)
			write(t, filepath.Join(pkg, "lib", "index.js"), "")
		}
		if got := decide(t, dir); got != "" {
			t.Errorf("approval of a change with a large untracked node_modules: refused: %s", got)
		}
	})
}

// TestGitListBound: git's list is kept whole up to maxGitList bytes of
// names, and past it not at all (over), whatever untracked vendored
// files it drops on the way.
func TestGitListBound(t *testing.T) {
	l := &gitList{untracked: true}
	name := strings.Repeat("a", 99) + ".py\x00"
	dropped := "node_modules/x/" + name
	for l.size <= maxGitList-2*len(name) {
		l.Write([]byte(dropped + name[:50]))
		l.Write([]byte(name[50:]))
	}
	if l.over || len(l.names) != l.size/(len(name)-1) || l.names[0] != name[:len(name)-1] {
		t.Fatalf("under the bound: over %v, %d names of %d bytes, first %q", l.over, len(l.names), l.size, l.names[0])
	}
	l.Write([]byte(name + name + name))
	if !l.over || l.names != nil {
		t.Errorf("past the bound: over %v, %d names, want over and none", l.over, len(l.names))
	}
}

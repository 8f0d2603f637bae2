package review

import (
	"fmt"
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
	needTools(t, "git", "pytest")
	decide := func(t *testing.T, dir string) string {
		t.Helper()
		return approveAfter(t, dir, pytestRun, validatePy, approvePy)
	}
	workspace := func(t *testing.T, add string) string {
		dir := pyAddProject(t, map[string]string{"pytest.ini": "[pytest]\npythonpath = .\ntestpaths = tests\n"})
		write(t, filepath.Join(dir, "app", "add.py"), "def add(a, b):\n    return "+add+"\n")
		return dir
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

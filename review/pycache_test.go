package review

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRunCommandStaleBytecode: Python, and pytest's assertion rewriter,
// run a module's cached bytecode from the workspace's __pycache__ when
// its header matches the source's size and mtime, not the source. A
// worker that ran pytest once with a conftest.py hook turning failures
// into passes, then put back an innocent conftest.py of the same size and
// mtime, left the hook in the cache: the coach read the innocent file,
// ran pytest, and read "1 passed" over a failing test. The coach's runs
// now keep their bytecode under the run's own throwaway directory
// (PYTHONPYCACHEPREFIX), so what runs is the source it can read.
func TestRunCommandStaleBytecode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs pytest")
	}
	if _, err := exec.LookPath("pytest"); err != nil {
		t.Skip("SKIPPED: pytest is not installed")
	}
	const command = "pytest -q -p no:cacheprovider"
	dir := t.TempDir()
	write(t, filepath.Join(dir, "app", "__init__.py"), "")
	write(t, filepath.Join(dir, "app", "add.py"), "def add(a, b):\n    return a - b\n")
	write(t, filepath.Join(dir, "tests", "test_add.py"), "from app.add import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
	write(t, filepath.Join(dir, "pytest.ini"), "[pytest]\npythonpath = .\n")
	head := "# conftest.py: no hooks, only this comment\n"
	innocent := head + strings.Repeat("#", len(forgingConftest)-len(head)-1) + "\n"
	conftest := filepath.Join(dir, "conftest.py")
	mtime := time.Now().Add(-time.Hour).Truncate(time.Second)
	// The worker's run, with the hook, fills the cache.
	write(t, conftest, forgingConftest)
	if err := os.Chtimes(conftest, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	worker := exec.Command("pytest", strings.Fields(command)[1:]...)
	worker.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PYTHONDONTWRITEBYTECODE=") && !strings.HasPrefix(kv, "PYTHONPYCACHEPREFIX=") {
			worker.Env = append(worker.Env, kv)
		}
	}
	if out, err := worker.CombinedOutput(); err != nil || !strings.Contains(string(out), "1 passed") {
		t.Fatalf("the worker's forged run: %v %s", err, out)
	}
	if cached, _ := filepath.Glob(filepath.Join(dir, "__pycache__", "conftest.*.pyc")); len(cached) == 0 {
		t.Fatal("the worker's run cached no bytecode of its conftest.py")
	}
	write(t, conftest, innocent)
	if err := os.Chtimes(conftest, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	tools, _ := reviewTools(t, dir, command)
	res := call(t, tools, RunCommandTool, `{"command":"`+command+`"}`)
	if !strings.Contains(res.Content, `"failed":1`) || strings.Contains(res.Content, `"exit_code":0`) {
		t.Errorf("the coach's pytest ran the worker's cached hook, not the conftest.py it can read: %s", res.Content)
	}
}

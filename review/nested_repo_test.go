package review

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestApprovalOnNestedRepository: git lists no file of a directory that
// is a repository of its own (a .git in it), only the directory, which
// no pathspec of gitChanged's matched: a worker that wrote its tests and
// a forging conftest.py in a new tests/ and ran git init there had the
// coach's pytest run, failing test turned to a pass, approved with no
// test_config_reviewed asked. Such a directory, but a dependency's
// (node_modules), now refuses the approval: what it changes is not
// listed.
func TestApprovalOnNestedRepository(t *testing.T) {
	needTools(t, "git", "pytest")
	const validate = `{"task_id":"TASK-001","requirements":["Add adds"],"player_report":{"files_modified":["app/add.py","tests/test_add.py"]}}`
	decide := func(t *testing.T, add string, nested ...string) string {
		t.Helper()
		dir := t.TempDir()
		write(t, filepath.Join(dir, "app", "__init__.py"), "")
		write(t, filepath.Join(dir, "app", "add.py"), "def add(a, b):\n    return 0\n")
		write(t, filepath.Join(dir, "pytest.ini"), "[pytest]\npythonpath = .\n")
		gitIn(t, dir, "init", "-q")
		gitIn(t, dir, "add", "-A")
		gitIn(t, dir, "commit", "-q", "-m", "start")
		// The change: add, and its tests.
		write(t, filepath.Join(dir, "app", "add.py"), "def add(a, b):\n    return "+add+"\n")
		write(t, filepath.Join(dir, "tests", "test_add.py"), "from app.add import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
		for _, d := range nested {
			write(t, filepath.Join(dir, d, "conftest.py"), forgingConftest)
			gitIn(t, filepath.Join(dir, d), "init", "-q")
		}
		return approveAfter(t, dir, pytestRun, validate, approvePy)
	}
	t.Run("ErrTestsRepository", func(t *testing.T) {
		if got := decide(t, "a - b", "tests"); !strings.Contains(got, "approval refused") || !strings.Contains(got, "tests/") {
			t.Errorf("approval over a forging tests/conftest.py in a repository of its own: %q, want refused naming tests/", got)
		}
	})
	t.Run("OKDependencyRepository", func(t *testing.T) {
		if got := decide(t, "a + b", "node_modules/from-git"); got != "" {
			t.Errorf("approval of a change beside a dependency installed from git: refused: %s", got)
		}
	})
}

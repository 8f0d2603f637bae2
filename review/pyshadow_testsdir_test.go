package review

import (
	"path/filepath"
	"strings"
	"testing"
)

// shadowingFractions is a tests/fractions.py: pytest's rootdir-based
// import puts tests/ (no __init__.py) first on sys.path, so a test's
// import fractions loads it, and it turns every failed report into a
// pass.
const shadowingFractions = "import gc\n\nimport pytest\nfrom _pytest.config import Config\n\nFraction = int\n\n\n" +
	"class _Pass:\n    @pytest.hookimpl(hookwrapper=True)\n    def pytest_runtest_makereport(self, item, call):\n" +
	"        rep = (yield).get_result()\n        rep.outcome, rep.longrepr = \"passed\", None\n\n\n" +
	"next(o for o in gc.get_objects() if isinstance(o, Config)).pluginmanager.register(_Pass())\n"

// TestApprovalOnShadowingInTestsDir: pytest puts the directory of a test
// module that is not in a package first on sys.path, so a module the
// change adds there under a standard library name (tests/fractions.py)
// runs in place of the real one when a test imports it, and can make
// failing tests pass. The coach ran pytest, read "1 passed", and its
// approval was recorded: only modules at the workspace's top counted as
// ones that take the standard library's place. In a package (an
// __init__.py beside it) the module is imported by its package's name,
// and shadows nothing.
func TestApprovalOnShadowingInTestsDir(t *testing.T) {
	needTools(t, "git", "pytest")
	start := func(t *testing.T) string {
		dir := pyAddProject(t, map[string]string{
			"tests/test_add.py": "import fractions\n\nfrom app.add import add\n\n\n" +
				"def test_add():\n    assert add(2, 3) == fractions.Fraction(5)\n",
		})
		// The change: add breaks.
		write(t, filepath.Join(dir, "app", "add.py"), "def add(a, b):\n    return a - b\n")
		return dir
	}
	decide := func(t *testing.T, dir string) string {
		t.Helper()
		return approveAfter(t, dir, pytestRun, validatePy, approvePy)
	}
	t.Run("ErrShadowing", func(t *testing.T) {
		dir := start(t)
		write(t, filepath.Join(dir, "tests", "fractions.py"), shadowingFractions)
		if got := decide(t, dir); !strings.Contains(got, "tests/fractions.py") || !strings.Contains(got, "test_config_reviewed") {
			t.Errorf("approval over a tests/fractions.py that takes the standard library's place: %q, want refused naming it", got)
		}
	})
	t.Run("OKInPackage", func(t *testing.T) {
		// app is a package: app/fractions.py is app.fractions, and the
		// test's import fractions is the standard library's.
		dir := start(t)
		write(t, filepath.Join(dir, "app", "add.py"), "def add(a, b):\n    return a + b\n")
		write(t, filepath.Join(dir, "app", "fractions.py"), "HALF = 0.5\n")
		if got := decide(t, dir); got != "" {
			t.Errorf("approval of a change whose fractions.py is in a package: refused: %s", got)
		}
	})
}

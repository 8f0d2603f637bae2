package review

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestApprovalOnShadowedPytest: python -m pytest puts the workspace
// first on sys.path, so a pytest.py (or a _pytest/ package, or a module
// of the standard library pytest imports) at its top runs in place of
// the real one: a change that adds a pytest.py printing "1 passed" and
// exiting 0 forged the coach's run over a failing test, and the approval
// was recorded, the file being no harness file. Such a module is harness
// now: the approval names it in test_config_reviewed. A module of the
// same name inside a package, or the tests in a top test/ directory, are
// not: nothing puts their directory on sys.path before pytest's own.
func TestApprovalOnShadowedPytest(t *testing.T) {
	if testing.Short() {
		t.Skip("runs python3")
	}
	for _, tool := range []string{"git", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("SKIPPED: %s is not installed", tool)
		}
	}
	const command = "python3 -m pytest -q -p no:cacheprovider"
	// Its source, or sourceless bytecode: python imports a pytest.pyc
	// at the top of sys.path as it would a pytest.py.
	for _, name := range []string{"pytest.py", "pytest.pyc"} {
		t.Run(name, func(t *testing.T) { shadowedPytest(t, command, name) })
	}
}

func shadowedPytest(t *testing.T, command, name string) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "app", "__init__.py"), "")
	write(t, filepath.Join(dir, "app", "add.py"), "def add(a, b):\n    return a + b\n")
	write(t, filepath.Join(dir, "tests", "test_add.py"), "from app.add import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
	gitIn(t, dir, "init", "-q")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "start")
	// The change: add breaks, and a pytest.py hides it.
	write(t, filepath.Join(dir, "app", "add.py"), "def add(a, b):\n    return a - b\n")
	write(t, filepath.Join(dir, "pytest.py"), "print(\"1 passed in 0.01s\")\n")
	if name == "pytest.pyc" {
		compile := exec.Command("python3", "-c", "import py_compile, os; py_compile.compile('pytest.py', cfile='pytest.pyc', doraise=True); os.remove('pytest.py')")
		compile.Dir = dir
		if out, err := compile.CombinedOutput(); err != nil {
			t.Fatalf("compiling pytest.pyc: %v %s", err, out)
		}
	}
	tools, _ := reviewTools(t, dir, command)
	if res := call(t, tools, ValidateTool, `{"task_id":"TASK-001","requirements":["Add adds"],"player_report":{"files_modified":["app/add.py"]}}`); res.IsError {
		t.Fatalf("validate: %s", res.Content)
	}
	if res := call(t, tools, RunCommandTool, `{"command":"`+command+`"}`); !strings.Contains(res.Content, `"exit_code":0`) {
		t.Fatalf("python -m pytest was not forged: %s", res.Content)
	}
	res := call(t, tools, DecisionTool, `{"task_id":"TASK-001","decision":"approve","rationale":"Add adds; the suite passes.",`+
		`"requirements_verified":[{"requirement":"Add adds","status":"met","evidence":"test_add passes"}]}`)
	if !res.IsError || !strings.Contains(res.Content, name+",") && !strings.Contains(res.Content, name+" ") || !strings.Contains(res.Content, "test_config_reviewed") {
		t.Errorf("approval over a pytest.py that takes pytest's place: %s, want refused naming it", res.Content)
	}
}

// TestIsHarnessShadowing: which workspace modules can take the place of
// pytest's own or of the standard library's under python -m pytest.
func TestIsHarnessShadowing(t *testing.T) {
	for p, want := range map[string]bool{
		"pytest.py": true, "_pytest/__init__.py": true, "_pytest/terminal.py": true, "pluggy/__init__.py": true,
		"json.py": true, "re.py": true, "json/__init__.py": true, "difflib.py": true,
		"pytest.pyc": true, "json/__init__.pyc": true, "_pytest/__init__.cpython-311-x86_64-linux-gnu.so": true, "re.abi3.so": true, "re.so": true,
		"__pycache__/pytest.cpython-311.pyc": false, "app.pyc": false, "json.txt": false,
		"app/json.py": false, "app/pytest.py": false, "test/test_add.py": false, "tests/re.py": false, "add.py": false, "jsonx.py": false,
	} {
		if got := isHarness(p); got != want {
			t.Errorf("isHarness(%q) = %v, want %v", p, got, want)
		}
	}
}

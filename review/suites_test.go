package review

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// approveUncounted approves Add adds, claiming no test counts.
const approveUncounted = `{"task_id":"TASK-001","decision":"approve","rationale":"Add adds.","requirements_verified":[{"requirement":"Add adds","status":"met","evidence":"the tests pass"}]}`

// TestApprovalOnUntestedPythonChange: only a change's Go packages had to
// be tested. A player that changed app/b.py was approved on a go test
// run (a Go module with Python beside it), or on a pytest run of
// tests/test_a.py alone: nothing of the review ran the tests of the code
// it changed. A change to Python files now needs a passing pytest run of
// the whole suite.
func TestApprovalOnUntestedPythonChange(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test and pytest")
	}
	if _, err := exec.LookPath("pytest"); err != nil {
		t.Skip("SKIPPED: pytest is not installed (apt-get install python3-pytest)")
	}
	const (
		all    = "pytest -q -p no:cacheprovider"
		testA  = "pytest -q -p no:cacheprovider tests/test_a.py"
		byName = "pytest -q -p no:cacheprovider -k test_a"
		goTest = "go test ./..."
	)
	validate := `{"task_id":"TASK-001","requirements":["Add adds"],"player_report":{"files_modified":["add.go","app/b.py"]}}`
	gitInit := false
	review := func(t *testing.T, runs ...string) string {
		t.Helper()
		dir := goModule(t, true)
		write(t, filepath.Join(dir, "conftest.py"), "")
		write(t, filepath.Join(dir, "app", "__init__.py"), "")
		write(t, filepath.Join(dir, "app", "a.py"), "def a():\n    return 1\n")
		write(t, filepath.Join(dir, "app", "b.py"), "def b():\n    return 2\n")
		write(t, filepath.Join(dir, "tests", "test_a.py"), "from app.a import a\n\ndef test_a():\n    assert a() == 1\n")
		write(t, filepath.Join(dir, "tests", "test_b.py"), "from app.b import b\n\ndef test_b():\n    assert b() == 2\n")
		if gitInit {
			for _, argv := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "start"}} {
				cmd := exec.Command("git", argv...)
				cmd.Dir = dir
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v %s", argv, err, out)
				}
			}
			write(t, filepath.Join(dir, "app", "b.py"), "def b():\n    return 1 + 1\n") // the worker's change
		}
		tools, _ := reviewTools(t, dir, all, testA, byName, goTest)
		if res := call(t, tools, ValidateTool, validate); res.IsError {
			t.Fatalf("validate: %+v", res)
		}
		for _, r := range runs {
			if res := call(t, tools, RunCommandTool, `{"command":"`+r+`"}`); res.IsError || !strings.Contains(res.Content, `"exit_code":0`) {
				t.Fatalf("%s: %s", r, res.Content)
			}
		}
		res := call(t, tools, DecisionTool, approveUncounted)
		if res.IsError {
			return res.Content
		}
		return ""
	}
	for _, runs := range [][]string{{goTest}, {goTest, testA}, {goTest, byName}} {
		if got := review(t, runs...); !strings.Contains(got, "Python files (app/b.py)") {
			t.Errorf("after %q: approval %q, want refused naming app/b.py", runs, got)
		}
	}
	if got := review(t, goTest, all); got != "" {
		t.Errorf("after go test and the whole pytest suite: refused: %s", got)
	}
	// In a git workspace, a changed Python file the report leaves out.
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("SKIPPED: git is not installed")
	}
	validate = `{"task_id":"TASK-001","requirements":["Add adds"],"player_report":{"files_modified":["add.go"]}}`
	gitInit = true
	if got := review(t, goTest); !strings.Contains(got, "Python files (app/b.py)") {
		t.Errorf("after go test, app/b.py changed in git: approval %q, want refused naming app/b.py", got)
	}
}

// TestWholeSuite: the pytest and jest command lines that run all of
// their tests.
func TestWholeSuite(t *testing.T) {
	for line, want := range map[string]string{
		"pytest -q":       ".",
		"pytest -q tests": ".",
		"python3 -m pytest -q -p no:cacheprovider": ".",
		"pytest -q tests/test_a.py":                "",
		"pytest tests/test_a.py::test_x":           "",
		"pytest -k test_a":                         "",
		"pytest -ktest_a":                          "",
		"pytest -m slow":                           "",
		"python3 -m pytest --lf":                   "",
		"pytest --deselect=tests/test_b.py":        "",
		"npm test":                                 ".",
		"npm --prefix web test":                    "web",
		"pnpm -C web test:unit":                    "web",
		"npm run test:unit":                        ".",
		"npm test -- src/a.test.js":                "",
		"npm test -- -t adds":                      "",
		"npx jest":                                 ".",
		"npx jest --maxWorkers 2":                  ".",
		"npx jest src/a.test.js":                   "",
		"jest --onlyChanged":                       "",
		"go test ./...":                            "",
		"cat results.txt":                          "",
	} {
		dir, whole := wholeSuite(strings.Fields(line))
		if !whole {
			dir = ""
		}
		if dir != want {
			t.Errorf("wholeSuite(%q) = %q, want %q", line, dir, want)
		}
	}
}

// TestApprovalOfFilesNoSuiteTests: a Go module's embedded web/app.js (no
// package.json) or its scripts/gen.py (no Python tests anywhere) has no
// jest or pytest suite to run: like a Go package without test files, a
// change to it is not held to one, and go test ./... approves.
func TestApprovalOfFilesNoSuiteTests(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	dir := goModule(t, true)
	write(t, filepath.Join(dir, "web", "app.js"), "export const x = 1;\n")
	write(t, filepath.Join(dir, "scripts", "gen.py"), "print('gen')\n")
	tools, _ := reviewTools(t, dir, "go test ./...")
	validate := `{"task_id":"TASK-001","requirements":["Add adds"],"player_report":{"files_modified":["add.go","web/app.js","scripts/gen.py"]}}`
	if res := call(t, tools, ValidateTool, validate); res.IsError {
		t.Fatalf("validate: %+v", res)
	}
	if res := call(t, tools, RunCommandTool, `{"command":"go test ./..."}`); !strings.Contains(res.Content, `"exit_code":0`) {
		t.Fatalf("run: %s", res.Content)
	}
	if res := call(t, tools, DecisionTool, approveUncounted); res.IsError {
		t.Errorf("approval refused for files no suite tests: %s", res.Content)
	}
}

package review

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The add project: index.js adds, index.test.js checks it (app/add.py and
// tests/test_add.py in Python). The tests of a change that breaks add and
// forges its tests' pass (through jest's config, an installed jest, an
// .npmrc, a module in the standard library's place, a conftest.py git
// does not list) build it here and review it as the honest coach does.

// brokenAdd is the change's index.js: add subtracts.
const brokenAdd = "module.exports = (a, b) => a - b\n"

// forgingHook, loaded into a node process, has it print "1 passed" for
// "1 failed" and exit 0 whatever it meant to.
const forgingHook = "const exit = process.exit\nprocess.exit = () => exit(0)\n" +
	"const w = process.stdout.write.bind(process.stdout)\n" +
	"process.stdout.write = (s, ...a) => w(String(s).replace('1 failed', '1 passed'), ...a)\n"

// needTools skips t unless each tool is installed (and not in -short).
func needTools(t *testing.T, tools ...string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("runs %s", strings.Join(tools, ", "))
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("SKIPPED: %s is not installed", tool)
		}
	}
}

// jestStub is jest as installed, for the add project: it runs load (the
// JavaScript that loads what its config names; "" for none), then
// index.test.js, prints jest's summary of it and exits as it did.
func jestStub(load string) string {
	return "#!/usr/bin/env node\nconst { spawnSync } = require('child_process')\n" + load +
		"const r = spawnSync(process.execPath, ['index.test.js'], { stdio: 'pipe' })\n" +
		"console.log(r.status === 0 ? 'Tests:       1 passed, 1 total' : 'Tests:       1 failed, 1 total')\nprocess.exit(r.status)\n"
}

// addProject writes the add project and files (slash path: content) into
// a new directory, runs before on it (nil for nothing), and commits it
// all as the change's base.
func addProject(t *testing.T, files map[string]string, before func(dir string)) string {
	t.Helper()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "index.js"), "module.exports = (a, b) => a + b\n")
	write(t, filepath.Join(dir, "index.test.js"), "if (require('./index.js')(2, 3) !== 5) process.exit(1)\n")
	for name, content := range files {
		write(t, filepath.Join(dir, filepath.FromSlash(name)), content)
	}
	if before != nil {
		before(dir)
	}
	gitIn(t, dir, "init", "-q")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "start")
	return dir
}

// The Python add project's run and its review's calls.
const (
	pytestRun  = "pytest -q -p no:cacheprovider"
	validatePy = `{"task_id":"TASK-001","requirements":["Add adds"],"player_report":{"files_modified":["app/add.py"]}}`
	approvePy  = `{"task_id":"TASK-001","decision":"approve","rationale":"Add adds; the suite passes.",` +
		`"requirements_verified":[{"requirement":"Add adds","status":"met","evidence":"test_add passes"}]}`
)

// pyAddProject is the add project in Python (app/add.py adds,
// tests/test_add.py checks it, pytest.ini puts the workspace on the
// path) with files (slash path: content), committed as the change's
// base.
func pyAddProject(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "app", "__init__.py"), "")
	write(t, filepath.Join(dir, "app", "add.py"), "def add(a, b):\n    return a + b\n")
	write(t, filepath.Join(dir, "tests", "test_add.py"), "from app.add import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
	write(t, filepath.Join(dir, "pytest.ini"), "[pytest]\npythonpath = .\n")
	for name, content := range files {
		write(t, filepath.Join(dir, filepath.FromSlash(name)), content)
	}
	gitIn(t, dir, "init", "-q")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "start")
	return dir
}

// approveAfter reviews dir as the honest coach does: it validates the
// change (validate's input), runs command, which must exit 0 (the pass
// the change forged, or a real one), and decides (approve's input). It
// returns the approval's refusal, "" when the approval was taken.
func approveAfter(t *testing.T, dir, command, validate, approve string) string {
	t.Helper()
	tools, _ := reviewTools(t, dir, command)
	if res := call(t, tools, ValidateTool, validate); res.IsError {
		t.Fatalf("validate: %s", res.Content)
	}
	if res := call(t, tools, RunCommandTool, `{"command":"`+command+`"}`); !strings.Contains(res.Content, `"exit_code":0`) {
		t.Fatalf("%s did not pass: %s", command, res.Content)
	}
	if res := call(t, tools, DecisionTool, approve); res.IsError {
		return res.Content
	}
	return ""
}

// approveAfterNpmTest is approveAfter for the add project in JavaScript:
// index.js reported, npm test run.
func approveAfterNpmTest(t *testing.T, dir string) string {
	t.Helper()
	return approveAfter(t, dir, "npm test",
		`{"task_id":"TASK-001","requirements":["Add adds"],"player_report":{"files_modified":["index.js"]}}`,
		`{"task_id":"TASK-001","decision":"approve","rationale":"Add adds; the suite passes.",`+
			`"requirements_verified":[{"requirement":"Add adds","status":"met","evidence":"npm test passes"}]}`)
}

package review

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The add project: index.js adds, index.test.js checks it. The tests of a
// change that breaks add and forges npm test's pass (through jest's
// config, an installed jest, an .npmrc) build it here and review it as
// the honest coach does.

// brokenAdd is the change's index.js: add subtracts.
const brokenAdd = "module.exports = (a, b) => a - b\n"

// forgingHook, loaded into a node process, has it print "1 passed" for
// "1 failed" and exit 0 whatever it meant to.
const forgingHook = "const exit = process.exit\nprocess.exit = () => exit(0)\n" +
	"const w = process.stdout.write.bind(process.stdout)\n" +
	"process.stdout.write = (s, ...a) => w(String(s).replace('1 failed', '1 passed'), ...a)\n"

// needNpm skips t unless git and npm are installed (and not in -short).
func needNpm(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs npm")
	}
	for _, tool := range []string{"git", "npm"} {
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

// approveAfterNpmTest reviews dir as the honest coach does: it validates
// the change (index.js reported), runs npm test, which must exit 0 (the
// pass the change forged, or a real one), and approves. It returns the
// approval's refusal, "" when the approval was taken.
func approveAfterNpmTest(t *testing.T, dir string) string {
	t.Helper()
	tools, _ := reviewTools(t, dir, "npm test")
	if res := call(t, tools, ValidateTool, `{"task_id":"TASK-001","requirements":["Add adds"],"player_report":{"files_modified":["index.js"]}}`); res.IsError {
		t.Fatalf("validate: %s", res.Content)
	}
	if res := call(t, tools, RunCommandTool, `{"command":"npm test"}`); !strings.Contains(res.Content, `"exit_code":0`) {
		t.Fatalf("npm test did not pass: %s", res.Content)
	}
	res := call(t, tools, DecisionTool, `{"task_id":"TASK-001","decision":"approve","rationale":"Add adds; the suite passes.",`+
		`"requirements_verified":[{"requirement":"Add adds","status":"met","evidence":"npm test passes"}]}`)
	if !res.IsError {
		return ""
	}
	return res.Content
}

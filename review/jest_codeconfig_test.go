package review

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestApprovalOnJestSetupJoinedInCode: a jest.config.js is code, and
// builds the paths it names as code does, path.join(__dirname, 'test',
// 'setup.js'): no quoted string in it is the setup file's path, so a
// change that rewrote that setup file to report a pass was an ordinary
// JavaScript change, and the approval over the forged npm test was
// recorded. A code config that quotes a changed file's name names it.
func TestApprovalOnJestSetupJoinedInCode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs npm")
	}
	for _, tool := range []string{"git", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("SKIPPED: %s is not installed", tool)
		}
	}
	// jest, as installed: it loads the config's setupFiles into the run,
	// then runs the tests.
	const jest = "#!/usr/bin/env node\nconst { spawnSync } = require('child_process')\n" +
		"for (const f of require(process.cwd() + '/jest.config.js').setupFiles || []) require(f)\n" +
		"const r = spawnSync(process.execPath, ['index.test.js'], { stdio: 'pipe' })\n" +
		"console.log(r.status === 0 ? 'Tests:       1 passed, 1 total' : 'Tests:       1 failed, 1 total')\nprocess.exit(r.status)\n"
	setup := func(t *testing.T) string {
		dir := t.TempDir()
		write(t, filepath.Join(dir, "index.js"), "module.exports = (a, b) => a + b\n")
		write(t, filepath.Join(dir, "index.test.js"), "if (require('./index.js')(2, 3) !== 5) process.exit(1)\n")
		write(t, filepath.Join(dir, "test", "setup.js"), "global.two = 2\n")
		write(t, filepath.Join(dir, "test", "helpers.js"), "module.exports = {}\n")
		write(t, filepath.Join(dir, "jest.config.js"), "const path = require('path')\n\n"+
			"module.exports = { setupFiles: [path.join(__dirname, 'test', 'setup.js')] }\n")
		write(t, filepath.Join(dir, "package.json"), `{"name":"add","version":"1.0.0","scripts":{"test":"node jest.js"}}`+"\n")
		write(t, filepath.Join(dir, "jest.js"), jest)
		gitIn(t, dir, "init", "-q")
		gitIn(t, dir, "add", "-A")
		gitIn(t, dir, "commit", "-q", "-m", "start")
		return dir
	}
	decide := func(t *testing.T, dir string) string {
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
	t.Run("ErrJoinedSetup", func(t *testing.T) {
		dir := setup(t)
		write(t, filepath.Join(dir, "index.js"), "module.exports = (a, b) => a - b\n")
		write(t, filepath.Join(dir, "test", "setup.js"), "const exit = process.exit\nprocess.exit = () => exit(0)\n"+
			"const w = process.stdout.write.bind(process.stdout)\n"+
			"process.stdout.write = (s, ...a) => w(String(s).replace('1 failed', '1 passed'), ...a)\n")
		if got := decide(t, dir); !strings.Contains(got, "test/setup.js") || !strings.Contains(got, "test_config_reviewed") {
			t.Errorf("approval over a forging setup file its jest.config.js joins in code: %q, want refused naming it", got)
		}
	})
	t.Run("OKUnnamed", func(t *testing.T) {
		dir := setup(t)
		write(t, filepath.Join(dir, "test", "helpers.js"), "module.exports = { three: 3 }\n")
		if got := decide(t, dir); got != "" {
			t.Errorf("approval of a change no jest config names: refused: %s", got)
		}
	})
}

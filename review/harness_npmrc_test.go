package review

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestApprovalOnForgedNpmrc: npm reads the project's .npmrc for every
// script it runs, and its node-options preload a module into each node
// process (script-shell swaps the shell itself): a change that adds
// `node-options=--require ./f.js`, with an f.js that rewrites "1 failed"
// to "1 passed" and the exit code to 0, forged npm test without touching
// package.json or jest's config. git did not even list it as changed,
// and the approval was recorded. .npmrc (and yarn's .yarnrc, .yarnrc.yml)
// is a harness file now: the approval names it in test_config_reviewed.
func TestApprovalOnForgedNpmrc(t *testing.T) {
	if testing.Short() {
		t.Skip("runs npm")
	}
	for _, tool := range []string{"git", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("SKIPPED: %s is not installed", tool)
		}
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "index.js"), "module.exports = (a, b) => a + b\n")
	write(t, filepath.Join(dir, "index.test.js"), "const ok = require('./index.js')(2, 3) === 5\n"+
		"console.log(ok ? 'Tests:       1 passed, 1 total' : 'Tests:       1 failed, 1 total')\nprocess.exit(ok ? 0 : 1)\n")
	write(t, filepath.Join(dir, "package.json"), `{"name":"add","version":"1.0.0","scripts":{"test":"node index.test.js"}}`+"\n")
	gitIn(t, dir, "init", "-q")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "start")
	// The change: add breaks, and an .npmrc hides it.
	write(t, filepath.Join(dir, "index.js"), "module.exports = (a, b) => a - b\n")
	write(t, filepath.Join(dir, "f.js"), "const w = process.stdout.write.bind(process.stdout)\n"+
		"process.stdout.write = (s, ...a) => w(String(s).replace('1 failed', '1 passed'), ...a)\n"+
		"const exit = process.exit\nprocess.exit = () => exit(0)\n")
	write(t, filepath.Join(dir, ".npmrc"), "node-options=--require ./f.js\n")
	tools, _ := reviewTools(t, dir, "npm test")
	if res := call(t, tools, ValidateTool, `{"task_id":"TASK-001","requirements":["Add adds"],"player_report":{"files_modified":["index.js"]}}`); res.IsError {
		t.Fatalf("validate: %s", res.Content)
	}
	if res := call(t, tools, RunCommandTool, `{"command":"npm test"}`); !strings.Contains(res.Content, `"exit_code":0`) {
		t.Fatalf("npm test was not forged: %s", res.Content)
	}
	res := call(t, tools, DecisionTool, `{"task_id":"TASK-001","decision":"approve","rationale":"Add adds; the suite passes.",`+
		`"requirements_verified":[{"requirement":"Add adds","status":"met","evidence":"npm test passes"}]}`)
	if !res.IsError || !strings.Contains(res.Content, ".npmrc") || !strings.Contains(res.Content, "test_config_reviewed") {
		t.Errorf("approval over a forging .npmrc: %s, want refused naming it", res.Content)
	}
}

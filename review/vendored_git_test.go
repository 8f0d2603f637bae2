package review

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestApprovalOnTrackedJestChanged: a workspace whose node_modules is in
// git (jest committed with the project) had its jest rewritten by the
// worker to print a passing summary whatever the tests did; git shows the
// change, yet installed code counted as harness only when autobuild saw
// the player change it, so over POST /v1/reviews and coachd review the
// coach's npm test read "1 passed" and the approval was taken. A file
// under node_modules (or a venv) that git shows changed from the base is
// the change's, like one autobuild saw changed; one git does not track
// is installed, not the change's.
func TestApprovalOnTrackedJestChanged(t *testing.T) {
	if testing.Short() {
		t.Skip("runs npm")
	}
	for _, tool := range []string{"git", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("SKIPPED: %s is not installed", tool)
		}
	}
	const jest = "#!/usr/bin/env node\nconst { spawnSync } = require('child_process')\n" +
		"const r = spawnSync(process.execPath, ['index.test.js'], { stdio: 'pipe' })\n" +
		"console.log(r.status === 0 ? 'Tests:       1 passed, 1 total' : 'Tests:       1 failed, 1 total')\nprocess.exit(r.status)\n"
	setup := func(t *testing.T) string {
		dir := t.TempDir()
		write(t, filepath.Join(dir, "index.js"), "module.exports = (a, b) => a + b\n")
		write(t, filepath.Join(dir, "index.test.js"), "if (require('./index.js')(2, 3) !== 5) process.exit(1)\n")
		write(t, filepath.Join(dir, "package.json"), `{"name":"add","version":"1.0.0","scripts":{"test":"jest"}}`+"\n")
		write(t, filepath.Join(dir, "node_modules", "jest", "bin", "jest.js"), jest)
		if err := os.Chmod(filepath.Join(dir, "node_modules", "jest", "bin", "jest.js"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, "node_modules", ".bin"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("../jest/bin/jest.js", filepath.Join(dir, "node_modules", ".bin", "jest")); err != nil {
			t.Fatal(err)
		}
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
	t.Run("ErrTrackedJest", func(t *testing.T) {
		dir := setup(t)
		// The change: add breaks, and jest says it passes.
		write(t, filepath.Join(dir, "index.js"), "module.exports = (a, b) => a - b\n")
		write(t, filepath.Join(dir, "node_modules", "jest", "bin", "jest.js"), "#!/usr/bin/env node\nconsole.log('Tests:       1 passed, 1 total')\n")
		if got := decide(t, dir); !strings.Contains(got, "node_modules/jest/bin/jest.js") || !strings.Contains(got, "test_config_reviewed") {
			t.Errorf("approval over a tracked node_modules/jest rewritten to pass: %q, want refused naming it", got)
		}
	})
	t.Run("OKUntracked", func(t *testing.T) {
		// A dependency installed beside the project, untracked, is not
		// the change's.
		dir := setup(t)
		write(t, filepath.Join(dir, "node_modules", "left-pad", "index.js"), "module.exports = s => s\n")
		if got := decide(t, dir); got != "" {
			t.Errorf("approval of a change that leaves tracked node_modules alone: refused: %s", got)
		}
	})
}

package review

import (
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
	needTools(t, "git", "npm")
	// jest, as installed: it loads the config's setupFiles into the run,
	// then runs the tests.
	setup := func(t *testing.T) string {
		return addProject(t, map[string]string{
			"test/setup.js":   "global.two = 2\n",
			"test/helpers.js": "module.exports = {}\n",
			"jest.config.js": "const path = require('path')\n\n" +
				"module.exports = { setupFiles: [path.join(__dirname, 'test', 'setup.js')] }\n",
			"package.json": `{"name":"add","version":"1.0.0","scripts":{"test":"node jest.js"}}` + "\n",
			"jest.js":      jestStub("for (const f of require(process.cwd() + '/jest.config.js').setupFiles || []) require(f)\n"),
		}, nil)
	}
	t.Run("ErrJoinedSetup", func(t *testing.T) {
		dir := setup(t)
		write(t, filepath.Join(dir, "index.js"), brokenAdd)
		write(t, filepath.Join(dir, "test", "setup.js"), forgingHook)
		if got := approveAfterNpmTest(t, dir); !strings.Contains(got, "test/setup.js") || !strings.Contains(got, "test_config_reviewed") {
			t.Errorf("approval over a forging setup file its jest.config.js joins in code: %q, want refused naming it", got)
		}
	})
	t.Run("OKUnnamed", func(t *testing.T) {
		dir := setup(t)
		write(t, filepath.Join(dir, "test", "helpers.js"), "module.exports = { three: 3 }\n")
		if got := approveAfterNpmTest(t, dir); got != "" {
			t.Errorf("approval of a change no jest config names: refused: %s", got)
		}
	})
}

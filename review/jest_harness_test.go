package review

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestApprovalOnForgedJestSetup: jest loads the modules its config names
// (setupFiles, setupFilesAfterEnv, globalSetup, a transform, a reporter)
// into the run, and babel-jest transforms every test through the
// project's babel config: a change that leaves package.json's jest
// settings alone but rewrites the setup file they name (or adds a
// .babelrc) can rewrite jest's summary and exit code. Such a file was an
// ordinary JavaScript change, and the approval over a forged "1 passed"
// was recorded. A file a jest config of its package names, and a babel
// config, are harness now: the approval names it in test_config_reviewed.
func TestApprovalOnForgedJestSetup(t *testing.T) {
	needTools(t, "git", "npm")
	setup := func(t *testing.T) string {
		dir := addProject(t, map[string]string{
			"test/global-setup.js": "module.exports = () => {}\n",
			"package.json": `{"name":"add","version":"1.0.0","scripts":{"test":"node jest.js"},` +
				`"jest":{"globalSetup":"<rootDir>/test/global-setup.js","setupFilesAfterEnv":["./test/after-env"]}}` + "\n",
			// jest, as installed: it requires the config's globalSetup
			// into its own process, then runs the tests.
			"jest.js": jestStub("const cfg = require(process.cwd() + '/package.json').jest || {}\n" +
				"if (cfg.globalSetup) require(require('path').resolve(cfg.globalSetup.replace('<rootDir>', process.cwd())))\n"),
		}, nil)
		write(t, filepath.Join(dir, "index.js"), brokenAdd)
		return dir
	}
	t.Run("ErrGlobalSetup", func(t *testing.T) {
		dir := setup(t)
		write(t, filepath.Join(dir, "test", "global-setup.js"), forgingHook+"module.exports = () => {}\n")
		if got := approveAfterNpmTest(t, dir); !strings.Contains(got, "test/global-setup.js") || !strings.Contains(got, "test_config_reviewed") {
			t.Errorf("approval over a forging globalSetup its jest config names: %q, want refused naming it", got)
		}
	})
	t.Run("OKUnnamed", func(t *testing.T) {
		dir := setup(t)
		write(t, filepath.Join(dir, "index.js"), "module.exports = (a, b) => a + b\n")
		write(t, filepath.Join(dir, "test", "setup-helpers.js"), "module.exports = 1\n")
		if got := approveAfterNpmTest(t, dir); got != "" {
			t.Errorf("approval of a change no jest config names: refused: %s", got)
		}
	})
}

// TestJestNamed: the files a jest config names, and babel's configs.
func TestJestNamed(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "web", "package.json"), `{"name":"web","jest":{"setupFiles":["<rootDir>/src/setup.js"],"transform":{"\\.js$":"./tools/tr"}}}`)
	write(t, filepath.Join(dir, "api", "jest.config.js"), "module.exports = { globalSetup: './gs.ts', reporters: ['default', '<rootDir>/rep/index.js'] }\n")
	ws, err := NewWorkspace(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	changed := []string{"web/src/setup.js", "web/src/setup2.js", "web/src/app.js", "web/tools/tr.js", "api/gs.ts", "api/rep/index.js", "api/setup.js",
		"setup.js", "index.js", "api/index.js", "node_modules/x/src/setup.js"}
	got := ws.jestNamed(changed)
	want := []string{"web/src/setup.js", "web/tools/tr.js", "api/gs.ts", "api/rep/index.js"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("jestNamed = %q, want %q", got, want)
	}
	for p, want := range map[string]bool{"web/.babelrc": true, "babel.config.js": true, "api/.babelrc.json": true, "api/babelrc.js": false} {
		if isHarness(p) != want {
			t.Errorf("isHarness(%q) = %v, want %v", p, !want, want)
		}
	}
}

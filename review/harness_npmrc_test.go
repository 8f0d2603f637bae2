package review

import (
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
	needTools(t, "git", "npm")
	dir := addProject(t, map[string]string{
		"index.test.js": "const ok = require('./index.js')(2, 3) === 5\n" +
			"console.log(ok ? 'Tests:       1 passed, 1 total' : 'Tests:       1 failed, 1 total')\nprocess.exit(ok ? 0 : 1)\n",
		"package.json": `{"name":"add","version":"1.0.0","scripts":{"test":"node index.test.js"}}` + "\n",
	}, nil)
	// The change: add breaks, and an .npmrc hides it.
	write(t, filepath.Join(dir, "index.js"), brokenAdd)
	write(t, filepath.Join(dir, "f.js"), forgingHook)
	write(t, filepath.Join(dir, ".npmrc"), "node-options=--require ./f.js\n")
	if got := approveAfterNpmTest(t, dir); !strings.Contains(got, ".npmrc") || !strings.Contains(got, "test_config_reviewed") {
		t.Errorf("approval over a forging .npmrc: %q, want refused naming it", got)
	}
}

package review

import (
	"os"
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
	needTools(t, "git", "npm")
	setup := func(t *testing.T) string {
		return addProject(t, map[string]string{
			"package.json":                  `{"name":"add","version":"1.0.0","scripts":{"test":"jest"}}` + "\n",
			"node_modules/jest/bin/jest.js": jestStub(""),
		}, func(dir string) {
			if err := os.Chmod(filepath.Join(dir, "node_modules", "jest", "bin", "jest.js"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(dir, "node_modules", ".bin"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("../jest/bin/jest.js", filepath.Join(dir, "node_modules", ".bin", "jest")); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("ErrTrackedJest", func(t *testing.T) {
		dir := setup(t)
		// The change: add breaks, and jest says it passes.
		write(t, filepath.Join(dir, "index.js"), brokenAdd)
		write(t, filepath.Join(dir, "node_modules", "jest", "bin", "jest.js"), "#!/usr/bin/env node\nconsole.log('Tests:       1 passed, 1 total')\n")
		if got := approveAfterNpmTest(t, dir); !strings.Contains(got, "node_modules/jest/bin/jest.js") || !strings.Contains(got, "test_config_reviewed") {
			t.Errorf("approval over a tracked node_modules/jest rewritten to pass: %q, want refused naming it", got)
		}
	})
	t.Run("OKUntracked", func(t *testing.T) {
		// A dependency installed beside the project, untracked, is not
		// the change's.
		dir := setup(t)
		write(t, filepath.Join(dir, "node_modules", "left-pad", "index.js"), "module.exports = s => s\n")
		if got := approveAfterNpmTest(t, dir); got != "" {
			t.Errorf("approval of a change that leaves tracked node_modules alone: refused: %s", got)
		}
	})
}

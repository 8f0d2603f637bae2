package review

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunCommandPathShim: a command's PATH was the server's as it was,
// and a relative entry in it ("bin", or an empty one, which a shell takes
// for the current directory: PATH=$EXTRA:$PATH with EXTRA unset) is
// looked up in the workspace by every program the command starts. npm
// test's script "jest" then ran the worker's own jest, a script echoing
// jest's summary, and the coach read "1 passed". A command's PATH now
// keeps only the server's absolute entries.
func TestRunCommandPathShim(t *testing.T) {
	if testing.Short() {
		t.Skip("runs npm")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("SKIPPED: npm is not installed")
	}
	const shim = "#!/bin/sh\necho 'Tests:       1 passed, 1 total'\n"
	for _, c := range []struct{ name, entry, at string }{
		{"Relative", "shim", "shim/jest"},
		{"Empty", "", "jest"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, filepath.Join(dir, "package.json"), `{"name":"add","version":"1.0.0","scripts":{"test":"jest"}}`+"\n")
			write(t, filepath.Join(dir, c.at), shim)
			if err := os.Chmod(filepath.Join(dir, c.at), 0o755); err != nil {
				t.Fatal(err)
			}
			t.Setenv("PATH", c.entry+":"+os.Getenv("PATH"))
			tools, _ := reviewTools(t, dir, "npm test")
			res := call(t, tools, RunCommandTool, `{"command":"npm test"}`)
			if strings.Contains(res.Content, `"exit_code":0`) || strings.Contains(res.Content, `"passed":1`) {
				t.Errorf("npm test ran the workspace's %s through PATH entry %q: %s", c.at, c.entry, res.Content)
			}
		})
	}
}

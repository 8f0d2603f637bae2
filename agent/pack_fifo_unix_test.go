//go:build unix

package agent_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/tools"
)

// TestPackFIFODir: a named pipe where a pack has a folder (skills/,
// tools/, mcp/, data/) was opened to be listed, which waits for a writer
// that never comes: the load hung (coachd pack validate and serve, past
// SIGTERM). It is a problem naming the folder. (Before the fix this test
// hangs until go test's -timeout.)
func TestPackFIFODir(t *testing.T) {
	dir := t.TempDir()
	writePackFiles(t, dir, map[string]string{"agents/a.md": "---\nname: a\ndescription: d\n---\nhi\n"})
	if err := syscall.Mkfifo(filepath.Join(dir, "skills"), 0o600); err != nil {
		t.Skip("no named pipes here:", err)
	}
	_, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins()})
	if err == nil || !strings.Contains(err.Error(), "skills") || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("LoadPack with skills a named pipe: %v", err)
	}
	os.Remove(filepath.Join(dir, "skills"))
}

//go:build unix

package filecap

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadInFIFO: a named pipe in a pack (agents/coach.md, a data file)
// was opened for reading, which waits for a writer that never comes:
// coachd pack validate and serve hung at load, and SIGTERM did not end
// them. A name that is not a regular file is refused without waiting.
//
// A writer is opened beside the read, so that the read, were it to wait,
// is let go (and reads nothing) rather than hanging the test.
func TestReadInFIFO(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "coach.md"), 0o600); err != nil {
		t.Skip("no named pipes here:", err)
	}
	go func() {
		if f, err := os.OpenFile(filepath.Join(dir, "coach.md"), os.O_WRONLY, 0); err == nil {
			f.Close()
		}
	}()
	t.Cleanup(func() { // lets the writer go if the read never opened the pipe
		if f, err := os.OpenFile(filepath.Join(dir, "coach.md"), os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	data, err := ReadIn(root, "coach.md", 1<<20)
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("ReadIn of a named pipe: %q, %v; want it refused as not a regular file", data, err)
	}
}

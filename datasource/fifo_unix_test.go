//go:build unix

package datasource_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/coachd/coachd/datasource"
)

// TestPackFIFO: a named pipe as a data file, or as its sqlite: database,
// was opened for reading, which waits for a writer that never comes: the
// pack's load hung (serve, pack validate), past SIGTERM. Each is a pack
// problem, found without waiting.
//
// A writer is opened beside the load, so that a read that waits is let
// go rather than hanging the test.
func TestPackFIFO(t *testing.T) {
	for _, tc := range []struct{ name, fifo, want string }{
		{"DataFile", "data/app.yaml", "data/app.yaml:0: is not a regular file"},
		{"Database", "data/app.db", "data/app.yaml:1: dsn: app.db is not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.MkdirAll(filepath.Join(dir, "data"), 0o755)
			os.WriteFile(filepath.Join(dir, "data", "app.yaml"), []byte("dsn: sqlite:app.db\ntables:\n  events: {scope: user_id, columns: [id]}\n"), 0o644)
			fifo := filepath.Join(dir, tc.fifo)
			os.Remove(fifo)
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skip("no named pipes here:", err)
			}
			go func() {
				if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
					f.Close()
				}
			}()
			t.Cleanup(func() { // lets the writer go if the load never opened the pipe
				if f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
					f.Close()
				}
			})
			set, err := datasource.Load(context.Background(), dir, []string{"data/app.yaml"}, func(string) string { return "" }, nil)
			if err == nil {
				set.Close()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

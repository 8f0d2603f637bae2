package review

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

// TestReadFileFIFO: a named pipe in the workspace (the worker's tests can
// leave one, named like a source file) is refused at once by read_file
// and the player's edit_file and write_file. Opening it blocked until a
// writer (or a reader) came, that is for ever: the call hung until the tool timeout (5
// minutes in examples/autobuild) and its goroutine and OS thread never
// came back.
func TestReadFileFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "README.md")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	ws, err := NewWorkspace(dir, Options{Write: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range ws.Tools() {
		name := tool.Definition().Name
		input := map[string]string{"read_file": `{"path":"README.md"}`, "edit_file": `{"path":"README.md","old_text":"a","new_text":"b"}`,
			"write_file": `{"path":"README.md","content":"# m"}`}[name]
		if input == "" {
			continue
		}
		done := make(chan coachd.ToolResult, 1)
		go func() {
			res, _ := tool.Execute(context.Background(), coachd.ToolCall{ID: "toolu_f", Name: name, Input: json.RawMessage(input)}, coachd.ToolEnv{})
			done <- res
		}()
		select {
		case res := <-done:
			if !res.IsError || !strings.Contains(res.Content, "not a regular file") {
				t.Errorf("%s on a FIFO: %+v", name, res)
			}
		case <-time.After(10 * time.Second):
			// Unblock the call, then fail.
			if w, err := os.OpenFile(fifo, os.O_RDWR, 0); err == nil {
				w.Close()
			}
			<-done
			t.Errorf("%s blocked on a FIFO", name)
		}
	}
}

package review

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/coachd/coachd"
)

// TestGrepLargeFileNotRead: grep skips files over maxGrepFile, and
// edit_file refuses files over maxWriteBytes, without reading them. Both
// read the whole file first and checked its size after, so one large (or
// sparse) file the worker's tests left in the workspace had the server
// allocate its size, gigabytes, on one call.
func TestGrepLargeFileNotRead(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "small.go"), "package m // needle\n")
	f, err := os.Create(filepath.Join(dir, "huge.log"))
	if err != nil {
		t.Fatal(err)
	}
	const size = 256 << 20
	if err := f.Truncate(size); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	tools, _ := reviewTools(t, dir)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res := call(t, tools, "grep", `{"pattern":"needle"}`)
	runtime.ReadMemStats(&after)
	if res.IsError || !strings.Contains(res.Content, "small.go:1:") {
		t.Fatalf("grep: %+v", res)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Fatalf("grep allocated %d MiB over a %d MiB file it skips", alloc>>20, size>>20)
	}

	// edit_file (the player's) refuses it the same way.
	ws, err := NewWorkspace(dir, Options{Write: true})
	if err != nil {
		t.Fatal(err)
	}
	var edit coachd.Tool
	for _, tool := range ws.Tools() {
		if tool.Definition().Name == EditFileTool {
			edit = tool
		}
	}
	runtime.ReadMemStats(&before)
	res, err = edit.Execute(context.Background(), coachd.ToolCall{ID: "toolu_e", Name: EditFileTool,
		Input: json.RawMessage(`{"path":"huge.log","old_text":"x","new_text":"y"}`)}, coachd.ToolEnv{})
	runtime.ReadMemStats(&after)
	if err != nil || !res.IsError {
		t.Fatalf("edit_file: %+v %v", res, err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Fatalf("edit_file allocated %d MiB over a %d MiB file it refuses", alloc>>20, size>>20)
	}
}

package review

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path"
	"strings"
	"syscall"

	"github.com/coachd/coachd"
)

// WriteFileTool and EditFileTool are the player's write tools.
const (
	WriteFileTool = "write_file"
	EditFileTool  = "edit_file"
	maxWriteBytes = 1 << 20
)

type writeFile struct{ w *Workspace }

func (writeFile) Definition() coachd.ToolDef {
	return coachd.ToolDef{
		Name:        WriteFileTool,
		Description: "Write a whole file of the workspace (created with its directories, or replaced).",
		Category:    coachd.ToolInstant,
		InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "minLength": 1, "maxLength": 1000},
    "content": {"type": "string", "maxLength": 1048576}
  },
  "required": ["path", "content"],
  "additionalProperties": false
}`),
		Truncate: []string{"content"},
	}
}

func (t writeFile) Execute(_ context.Context, call coachd.ToolCall, _ coachd.ToolEnv) (coachd.ToolResult, error) {
	var in struct{ Path, Content string }
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return refuse("invalid input: %v", err)
	}
	p, err := t.w.writable(in.Path)
	if err != nil {
		return refuse("%v", err)
	}
	if len(in.Content) > maxWriteBytes {
		return refuse("%s: content over %d bytes", p, maxWriteBytes)
	}
	if dir := path.Dir(p); dir != "." {
		if err := t.w.root.MkdirAll(dir, 0o755); err != nil {
			return refuse("%s", t.w.explain(dir, err))
		}
	}
	if err := t.w.write(p, []byte(in.Content)); err != nil {
		return refuse("%s", t.w.explain(p, err))
	}
	return jsonResult(map[string]any{"path": p, "bytes": len(in.Content)})
}

type editFile struct{ w *Workspace }

func (editFile) Definition() coachd.ToolDef {
	return coachd.ToolDef{
		Name:        EditFileTool,
		Description: "Replace one exact snippet of a workspace file: old_text must occur exactly once (add surrounding lines to make it unique).",
		Category:    coachd.ToolInstant,
		InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "minLength": 1, "maxLength": 1000},
    "old_text": {"type": "string", "minLength": 1, "maxLength": 100000},
    "new_text": {"type": "string", "maxLength": 100000}
  },
  "required": ["path", "old_text", "new_text"],
  "additionalProperties": false
}`),
	}
}

func (t editFile) Execute(_ context.Context, call coachd.ToolCall, _ coachd.ToolEnv) (coachd.ToolResult, error) {
	var in struct {
		Path    string `json:"path"`
		OldText string `json:"old_text"`
		NewText string `json:"new_text"`
	}
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return refuse("invalid input: %v", err)
	}
	p, err := t.w.writable(in.Path)
	if err != nil {
		return refuse("%v", err)
	}
	// Sized before it is read: a large file is never loaded whole.
	f, fi, err := t.w.open(p)
	if err != nil {
		return refuse("%s", t.w.explain(p, err))
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return refuse("%s is not a regular file (%s)", p, fi.Mode().Type())
	}
	data, err := io.ReadAll(io.LimitReader(f, maxWriteBytes+1))
	f.Close()
	if err != nil {
		return refuse("%s", t.w.explain(p, err))
	}
	if len(data) > maxWriteBytes {
		return refuse("%s: over %d bytes, too large to edit", p, maxWriteBytes)
	}
	switch n := strings.Count(string(data), in.OldText); n {
	case 0:
		return refuse("%s: old_text not found; read_file shows the current text", p)
	case 1:
	default:
		return refuse("%s: old_text occurs %d times; include more lines to make it unique", p, n)
	}
	out := strings.Replace(string(data), in.OldText, in.NewText, 1)
	if len(out) > maxWriteBytes {
		return refuse("%s: the result would be over %d bytes", p, maxWriteBytes)
	}
	if err := t.w.write(p, []byte(out)); err != nil {
		return refuse("%s", t.w.explain(p, err))
	}
	return jsonResult(map[string]any{"path": p, "bytes": len(out)})
}

// errNotRegular refuses a write to a named pipe, a device or a socket.
var errNotRegular = errors.New("not a regular file")

// write replaces p's content, creating it. It opens without blocking: a
// named pipe the worker left would otherwise wait for a reader for ever.
func (w *Workspace) write(p string, data []byte) error {
	f, err := w.root.OpenFile(p, os.O_WRONLY|os.O_CREATE|syscall.O_NONBLOCK, 0o644)
	if errors.Is(err, syscall.ENXIO) { // a named pipe nobody reads
		return errNotRegular
	}
	if err != nil {
		return err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return errNotRegular
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writable is rel for writes: not the workspace itself, nothing in .git.
func (w *Workspace) writable(p string) (string, error) {
	r, err := rel(p)
	if err != nil {
		return "", err
	}
	if r == "." || r == ".git" || strings.HasPrefix(r, ".git/") {
		return "", errWritable(r)
	}
	return r, nil
}

type errWritable string

func (e errWritable) Error() string {
	return string(e) + " cannot be written (the workspace root and .git are off limits)"
}

package review

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/coachd/coachd"
)

// Workspace bounds.
const (
	MaxReadBytes   = 256 << 10 // read_file returns at most this much of a file
	MaxListEntries = 2000
	MaxGrepMatches = 200
	maxGrepFile    = 1 << 20 // larger files are not searched
	maxLineChars   = 300
	sniffBytes     = 8 << 10
)

// Options configure a Workspace.
type Options struct {
	// Commands is run_command's allow-list: whole command lines.
	Commands []string
	// Write adds write_file and edit_file (the player's tools).
	Write bool
	// Timeout bounds one run_command or git_diff (default 5 minutes; the
	// agent's tool_timeout may end it sooner).
	Timeout time.Duration
	// Trace records the calls; nil records nothing.
	Trace *Trace
	// Base is the commit git_diff compares the files with ("" is HEAD,
	// which the worker's own commands can move): autobuild's start.
	Base string
}

// Workspace is a directory the review's tools are confined to. Every path
// is relative to it; opening goes through os.Root, so neither ".." nor a
// symlink can lead outside.
type Workspace struct {
	dir  string
	root *os.Root
	opts Options
	pyc  pycache // the review's bytecode (pycachePrefix)
}

// NewWorkspace opens dir as a workspace.
func NewWorkspace(dir string, opts Options) (*Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, coachd.Errorf(coachd.EINVALID, "workspace: %v", err)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Minute
	}
	w := &Workspace{dir: abs, root: root, opts: opts}
	if tr := opts.Trace; tr != nil {
		tr.mu.Lock()
		tr.ws = w
		tr.mu.Unlock()
	}
	return w, nil
}

// open opens p for reading without blocking: a named pipe the worker
// left would otherwise wait for a writer for ever. The caller checks the
// file's type.
func (w *Workspace) open(p string) (*os.File, os.FileInfo, error) {
	f, err := w.root.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// Dir is the workspace's directory.
func (w *Workspace) Dir() string { return w.dir }

// Tools returns the workspace's tools, recording into the trace.
func (w *Workspace) Tools() []coachd.Tool {
	ts := []coachd.Tool{readFile{w}, listFiles{w}, grepTool{w}, gitDiff{w}, runCommand{w}}
	if w.opts.Write {
		ts = append(ts, writeFile{w}, editFile{w})
	}
	if w.opts.Trace != nil {
		for i, t := range ts {
			ts[i] = traced{t, w.opts.Trace}
		}
	}
	return ts
}

// rel checks a path from the model: relative, inside the workspace once
// cleaned. It returns the slash-separated relative path ("." for the
// root).
func rel(p string) (string, error) {
	if p == "" || p == "." || p == "./" {
		return ".", nil
	}
	if strings.ContainsRune(p, 0) {
		return "", errors.New("the path has a NUL character")
	}
	if filepath.IsAbs(p) || strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("%q is absolute: paths are relative to the workspace", p)
	}
	c := path.Clean(filepath.ToSlash(p))
	if !filepath.IsLocal(filepath.FromSlash(c)) {
		return "", fmt.Errorf("%q leads outside the workspace", p)
	}
	return c, nil
}

// explain turns os.Root's errors into words for the model, without the
// host's absolute paths.
func (w *Workspace) explain(p string, err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("%s does not exist; list_files shows what does", p)
	case strings.Contains(err.Error(), "escapes from parent"), strings.Contains(err.Error(), "path escapes"):
		return fmt.Sprintf("%s leads outside the workspace (through a symlink or ..)", p)
	}
	return fmt.Sprintf("%s: %s", p, strings.ReplaceAll(err.Error(), w.dir, "."))
}

func refuse(format string, args ...any) (coachd.ToolResult, error) {
	return coachd.ToolResult{Content: fmt.Sprintf(format, args...), IsError: true}, nil
}

func jsonResult(v any) (coachd.ToolResult, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return coachd.ToolResult{}, err
	}
	return coachd.ToolResult{Content: string(b)}, nil
}

// binary reports whether a file's first bytes look like something other
// than text.
func binary(head []byte) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	// A multi-byte rune cut at the sniff boundary is not binary.
	for i := 0; i < 4 && len(head) > 0 && !utf8.Valid(head); i++ {
		head = head[:len(head)-1]
	}
	return !utf8.Valid(head)
}

type readFile struct{ w *Workspace }

func (readFile) Definition() coachd.ToolDef {
	return coachd.ToolDef{
		Name:        "read_file",
		Description: "Read a file of the workspace, with line numbers. offset (first line, from 1) and limit (lines) read part of a long file. Binary files are summarised.",
		Category:    coachd.ToolInstant,
		InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "minLength": 1, "maxLength": 1000},
    "offset": {"type": "integer", "minimum": 1},
    "limit": {"type": "integer", "minimum": 1, "maximum": 20000}
  },
  "required": ["path"],
  "additionalProperties": false
}`),
	}
}

func (t readFile) Execute(_ context.Context, call coachd.ToolCall, _ coachd.ToolEnv) (coachd.ToolResult, error) {
	var in struct {
		Path          string
		Offset, Limit int
	}
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return refuse("invalid input: %v", err)
	}
	p, err := rel(in.Path)
	if err != nil {
		return refuse("%v", err)
	}
	f, fi, err := t.w.open(p)
	if err != nil {
		return refuse("%s", t.w.explain(p, err))
	}
	defer f.Close()
	if fi.IsDir() {
		return refuse("%s is a directory; list_files lists it", p)
	}
	if !fi.Mode().IsRegular() {
		return refuse("%s is not a regular file (%s)", p, fi.Mode().Type())
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxReadBytes+1))
	if err != nil {
		return refuse("%s", t.w.explain(p, err))
	}
	if binary(data[:min(len(data), sniffBytes)]) {
		return jsonResult(map[string]any{"path": p, "binary": true, "bytes": fi.Size(),
			"type": http.DetectContentType(data[:min(len(data), 512)])})
	}
	truncated := len(data) > MaxReadBytes
	if truncated {
		data = data[:MaxReadBytes]
	}
	lines := strings.SplitAfter(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	first := max(in.Offset, 1)
	last := len(lines)
	if in.Limit > 0 {
		last = min(last, first-1+in.Limit)
	}
	var b strings.Builder
	for i := first; i <= last; i++ {
		fmt.Fprintf(&b, "%5d\t%s", i, strings.TrimSuffix(lines[i-1], "\n")+"\n")
	}
	if truncated {
		fmt.Fprintf(&b, "[truncated: the file has %d bytes; read on with offset]\n", fi.Size())
	}
	return coachd.ToolResult{Content: b.String()}, nil
}

type listFiles struct{ w *Workspace }

func (listFiles) Definition() coachd.ToolDef {
	return coachd.ToolDef{
		Name:        "list_files",
		Description: "List the workspace's files (or those under path), with their sizes; .git is skipped.",
		Category:    coachd.ToolInstant,
		InputSchema: json.RawMessage(pathSchema),
	}
}

// pathSchema is the input of the tools that take one optional path.
const pathSchema = `{
  "type": "object",
  "properties": {"path": {"type": "string", "maxLength": 1000}},
  "additionalProperties": false
}`

// inputPath decodes a {path} input and checks the path (rel).
func inputPath(call coachd.ToolCall) (string, error) {
	var in struct{ Path string }
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return "", fmt.Errorf("invalid input: %v", err)
	}
	return rel(in.Path)
}

func (t listFiles) Execute(_ context.Context, call coachd.ToolCall, _ coachd.ToolEnv) (coachd.ToolResult, error) {
	p, err := inputPath(call)
	if err != nil {
		return refuse("%v", err)
	}
	var b strings.Builder
	n := 0
	err = t.w.walk(p, func(name string, d fs.DirEntry) error {
		if n++; n > MaxListEntries {
			fmt.Fprintf(&b, "[stopped at %d entries]\n", MaxListEntries)
			return fs.SkipAll
		}
		switch {
		case d.IsDir():
			fmt.Fprintf(&b, "%s/\n", name)
		case d.Type()&fs.ModeSymlink != 0:
			fmt.Fprintf(&b, "%s (symlink)\n", name)
		default:
			size := int64(-1)
			if fi, err := d.Info(); err == nil {
				size = fi.Size()
			}
			fmt.Fprintf(&b, "%s (%d bytes)\n", name, size)
		}
		return nil
	})
	if err != nil {
		return refuse("%s", t.w.explain(p, err))
	}
	return coachd.ToolResult{Content: b.String()}, nil
}

// walk visits the entries under dir (not dir itself), skipping .git; the
// walk runs on the os.Root, so symlinks are listed, never followed.
func (w *Workspace) walk(dir string, fn func(name string, d fs.DirEntry) error) error {
	fsys := w.root.FS()
	if _, err := fs.Stat(fsys, dir); err != nil {
		return err
	}
	return fs.WalkDir(fsys, dir, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if name == dir {
			return nil
		}
		if d.IsDir() && d.Name() == ".git" {
			return fs.SkipDir
		}
		return fn(name, d)
	})
}

type grepTool struct{ w *Workspace }

func (grepTool) Definition() coachd.ToolDef {
	return coachd.ToolDef{
		Name:        "grep",
		Description: "Search the workspace's text files for a regular expression (RE2 syntax); glob narrows the files by name (e.g. *.go). Answers path:line: text.",
		Category:    coachd.ToolInstant,
		InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "minLength": 1, "maxLength": 1000},
    "path": {"type": "string", "maxLength": 1000},
    "glob": {"type": "string", "maxLength": 200}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`),
	}
}

func (t grepTool) Execute(ctx context.Context, call coachd.ToolCall, _ coachd.ToolEnv) (coachd.ToolResult, error) {
	var in struct{ Pattern, Path, Glob string }
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return refuse("invalid input: %v", err)
	}
	re, err := regexp.Compile(in.Pattern)
	if err != nil {
		return refuse("pattern: %v", err)
	}
	if _, err := path.Match(in.Glob, ""); err != nil {
		return refuse("glob: %v", err)
	}
	p, err := rel(in.Path)
	if err != nil {
		return refuse("%v", err)
	}
	var b strings.Builder
	n := 0
	err = t.w.walk(p, func(name string, d fs.DirEntry) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if ok, _ := path.Match(in.Glob, d.Name()); in.Glob != "" && !ok {
			return nil
		}
		// Sized before it is read: a large file is never loaded whole.
		if info, err := d.Info(); err != nil || info.Size() > maxGrepFile {
			return nil
		}
		// Opened without blocking and checked again: a process of the
		// worker's may have swapped it for a named pipe since.
		f, fi, err := t.w.open(name)
		if err != nil {
			return nil
		}
		if !fi.Mode().IsRegular() {
			f.Close()
			return nil
		}
		data, err := io.ReadAll(io.LimitReader(f, maxGrepFile+1))
		f.Close()
		if err != nil || len(data) > maxGrepFile || binary(data[:min(len(data), sniffBytes)]) {
			return nil
		}
		for i, line := range strings.Split(string(data), "\n") {
			if re.MatchString(line) {
				if n++; n > MaxGrepMatches {
					fmt.Fprintf(&b, "[stopped at %d matches]\n", MaxGrepMatches)
					return fs.SkipAll
				}
				fmt.Fprintf(&b, "%s:%d: %s\n", name, i+1, clip(line, maxLineChars))
			}
		}
		return nil
	})
	if err != nil {
		return refuse("%s", t.w.explain(p, err))
	}
	if n == 0 {
		return coachd.ToolResult{Content: "no matches"}, nil
	}
	return coachd.ToolResult{Content: b.String()}, nil
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// traced records a tool's calls in the review's trace.
type traced struct {
	coachd.Tool
	tr *Trace
}

// RecordsOutcome: the trace says what the model is told (ToolEnv.Finish).
func (traced) RecordsOutcome() {}

func (t traced) Execute(ctx context.Context, call coachd.ToolCall, env coachd.ToolEnv) (coachd.ToolResult, error) {
	var in struct{ Command string }
	if call.Name == RunCommandTool && json.Unmarshal(call.Input, &in) == nil && testCommand(strings.Fields(in.Command)) {
		t.tr.mu.Lock()
		t.tr.running++
		t.tr.mu.Unlock()
		defer func() { // once it is in the trace
			t.tr.mu.Lock()
			t.tr.running--
			t.tr.mu.Unlock()
		}()
	}
	start := t.tr.now()
	res, err := t.Tool.Execute(ctx, call, env)
	c := TraceCall{Tool: call.Name, Input: clip(string(call.Input), 300), At: start.UTC(),
		DurationMS: t.tr.now().Sub(start).Milliseconds(), OK: err == nil && !res.IsError}
	if call.Name == RunCommandTool && err == nil {
		var run CommandRun
		if json.Unmarshal([]byte(res.Content), &run) == nil && run.Command != "" {
			c.Command = &run
		}
	}
	if env.Finish != nil && !env.Finish() {
		// The turn left the call behind at its timeout: the model is told
		// it did not finish, and the trace says so too (never a pass).
		c.OK = false
		if c.Command != nil {
			c.Command.TimedOut = true
		}
	}
	t.tr.call(c)
	return res, err
}

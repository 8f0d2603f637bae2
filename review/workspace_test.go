package review

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd"
)

// exec runs one tool of ws by name.
func execTool(t *testing.T, ws *Workspace, name, input string) coachd.ToolResult {
	t.Helper()
	for _, tool := range ws.Tools() {
		if tool.Definition().Name == name {
			res, err := tool.Execute(context.Background(), coachd.ToolCall{ID: "toolu_1", Name: name, Input: json.RawMessage(input)}, coachd.ToolEnv{})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return res
		}
	}
	t.Fatalf("no tool %s", name)
	return coachd.ToolResult{}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// newWorkspace is a workspace with a file, a secret beside it (outside),
// and symlinks that point out.
func newWorkspace(t *testing.T, opts Options) (*Workspace, string) {
	t.Helper()
	top := t.TempDir()
	dir := filepath.Join(top, "ws")
	write(t, filepath.Join(top, "secret.txt"), "TOP SECRET")
	write(t, filepath.Join(top, "outside", "key.txt"), "TOP SECRET KEY")
	write(t, filepath.Join(dir, "main.go"), "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n")
	write(t, filepath.Join(dir, ".git", "config"), "[core]\n")
	if err := os.Symlink(filepath.Join(top, "secret.txt"), filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(top, "outside"), filepath.Join(dir, "linkdir")); err != nil {
		t.Fatal(err)
	}
	ws, err := NewWorkspace(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return ws, dir
}

func TestWorkspaceEscapes(t *testing.T) {
	ws, _ := newWorkspace(t, Options{Write: true})
	for _, tc := range []struct{ tool, input string }{
		{"read_file", `{"path":"../secret.txt"}`},
		{"read_file", `{"path":"sub/../../secret.txt"}`},
		{"read_file", `{"path":"/etc/passwd"}`},
		{"read_file", `{"path":"link.txt"}`},
		{"read_file", `{"path":"linkdir/key.txt"}`},
		{"list_files", `{"path":"../"}`},
		{"list_files", `{"path":"linkdir"}`},
		{"grep", `{"pattern":"SECRET","path":".."}`},
		{"grep", `{"pattern":"SECRET","path":"linkdir"}`},
		{"write_file", `{"path":"../evil.txt","content":"x"}`},
		{"write_file", `{"path":"linkdir/evil.txt","content":"x"}`},
		{"write_file", `{"path":".git/hooks/pre-commit","content":"x"}`},
		{"edit_file", `{"path":"link.txt","old_text":"TOP","new_text":"x"}`},
	} {
		res := execTool(t, ws, tc.tool, tc.input)
		if !res.IsError || strings.Contains(res.Content, "TOP SECRET") {
			t.Errorf("%s %s: not refused: %+v", tc.tool, tc.input, res)
		}
	}
	// A grep of the whole workspace lists symlinks but never follows them.
	if res := execTool(t, ws, "grep", `{"pattern":"SECRET"}`); res.IsError || res.Content != "no matches" {
		t.Errorf("grep followed a symlink out: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(ws.Dir()), "outside", "evil.txt")); err == nil {
		t.Error("a write escaped through a symlinked directory")
	}
}

func TestWorkspaceRead(t *testing.T) {
	ws, dir := newWorkspace(t, Options{})
	if res := execTool(t, ws, "read_file", `{"path":"main.go","offset":3,"limit":1}`); res.IsError || res.Content != "    3\tfunc main() {\n" {
		t.Fatalf("read_file: %q", res.Content)
	}
	write(t, filepath.Join(dir, "big.txt"), strings.Repeat("a line of text\n", MaxReadBytes/10))
	if res := execTool(t, ws, "read_file", `{"path":"big.txt"}`); res.IsError || !strings.Contains(res.Content, "[truncated: the file has") || len(res.Content) > MaxReadBytes*2 {
		t.Fatalf("big file: error=%v len=%d", res.IsError, len(res.Content))
	}
	os.WriteFile(filepath.Join(dir, "logo.png"), append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 100)...), 0o644)
	if res := execTool(t, ws, "read_file", `{"path":"logo.png"}`); res.IsError || !strings.Contains(res.Content, `"binary":true`) || !strings.Contains(res.Content, "image/png") {
		t.Fatalf("binary: %q", res.Content)
	}
	res := execTool(t, ws, "list_files", `{}`)
	if res.IsError || !strings.Contains(res.Content, "main.go (") || strings.Contains(res.Content, ".git") || !strings.Contains(res.Content, "link.txt (symlink)") {
		t.Fatalf("list_files: %q", res.Content)
	}
	if res := execTool(t, ws, "grep", `{"pattern":"func \\w+\\(","glob":"*.go"}`); res.Content != "main.go:3: func main() {\n" {
		t.Fatalf("grep: %q", res.Content)
	}
	if res := execTool(t, ws, "grep", `{"pattern":"("}`); !res.IsError {
		t.Fatalf("bad pattern accepted: %+v", res)
	}
}

func TestWorkspaceWrite(t *testing.T) {
	ws, dir := newWorkspace(t, Options{Write: true})
	if res := execTool(t, ws, "write_file", `{"path":"pkg/new.go","content":"package pkg\n"}`); res.IsError {
		t.Fatal(res.Content)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "pkg", "new.go")); string(b) != "package pkg\n" {
		t.Fatalf("written %q", b)
	}
	if res := execTool(t, ws, "edit_file", `{"path":"main.go","old_text":"\"hi\"","new_text":"\"hello\""}`); res.IsError {
		t.Fatal(res.Content)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "main.go")); !strings.Contains(string(b), `println("hello")`) {
		t.Fatalf("edited %q", b)
	}
	if res := execTool(t, ws, "edit_file", `{"path":"main.go","old_text":"main","new_text":"x"}`); !res.IsError || !strings.Contains(res.Content, "occurs 2 times") {
		t.Fatalf("ambiguous edit: %+v", res)
	}
	ro, _ := newWorkspace(t, Options{})
	for _, tool := range ro.Tools() {
		if n := tool.Definition().Name; n == "write_file" || n == "edit_file" {
			t.Fatalf("a read-only workspace has %s", n)
		}
	}
}

package agent_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/tools"
)

// Editors on Windows save UTF-8 with a byte order mark, and with CRLF line
// ends: such agent and skill files load as written, the BOM not part of
// the prompt.
func TestFrontMatterBOM(t *testing.T) {
	const bom = "\ufeff"
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		path := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("agents/a.md", bom+"---\r\nname: a\r\ndescription: d\r\nskills: [s]\r\n---\r\nHello\r\n")
	write("skills/s.md", bom+"---\nname: s\nsummary: one line\n---\n## Goal\n## When to Use\n## Context Needed\n## Tools to Use\n## Constraints\n## Guidance\n")
	p, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins()})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := p.Agent("a")
	if a.Prompt != "Hello" || len(a.Skills) != 1 {
		t.Fatalf("agent %q with %d skills", a.Prompt, len(a.Skills))
	}
}

// A key written twice is reported at the second one, naming the file line
// of the first: the message is whole, not cut at "defined at".
func TestFrontMatterDuplicateKey(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "agents"), 0o755)
	os.WriteFile(filepath.Join(dir, "agents", "a.md"), []byte("---\nname: a\ndescription: d\ndescription: e\n---\nhi\n"), 0o644)
	_, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins()})
	var pe *agent.PackError
	if !errors.As(err, &pe) || len(pe.Problems) != 1 {
		t.Fatalf("got %v, want one problem", err)
	}
	got, want := pe.Problems[0].String(), `agents/a.md:4: mapping key "description" already defined at line 3`
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// An empty front matter ("---" twice) is closed: the problems reported are
// what it lacks, not "front matter is not closed".
func TestFrontMatterEmpty(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "agents"), 0o755)
	os.WriteFile(filepath.Join(dir, "agents", "a.md"), []byte("---\n---\nhi\n"), 0o644)
	_, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins()})
	if err == nil || strings.Contains(err.Error(), "not closed") || !strings.Contains(err.Error(), "front matter must be a YAML mapping") {
		t.Fatalf("got %v, want the front matter reported empty, not unclosed", err)
	}
}

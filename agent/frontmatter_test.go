package agent_test

import (
	"os"
	"path/filepath"
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

package agent_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/tools"
)

// TestPackTypeErrorNamesField: a value of the wrong type in an agent or
// skill file is reported at its line naming the field and what it
// takes. It was yaml.v3's Go jargon with no field ("cannot unmarshal
// !!str `lots` into int64"): on a line of a flow mapping ({max_rounds:
// 3, max_tool_calls: many}) an author could not tell which was meant.
func TestPackTypeErrorNamesField(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "agents"), 0o755)
	os.MkdirAll(filepath.Join(dir, "skills"), 0o755)
	os.WriteFile(filepath.Join(dir, "agents", "a.md"), []byte("---\nname: a\ndescription: d\nskills: [s]\nmax_tokens: lots\nlimits: {max_rounds: 3, max_tool_calls: many}\n---\nhi\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "skills", "s.md"), []byte("---\nname: s\nsummary: one line\nwhen:\n  - checkin_due: maybe\n---\n"+
		"## Goal\n## When to Use\n## Context Needed\n## Tools to Use\n## Constraints\n## Guidance\n"), 0o644)
	_, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins()})
	if err == nil {
		t.Fatal("the pack loaded")
	}
	for _, want := range []string{
		"agents/a.md:5: max_tokens: \"lots\" is not an integer",
		"agents/a.md:6: limits.max_tool_calls: \"many\" is not an integer",
		"skills/s.md:5: when.checkin_due: \"maybe\" is not true or false",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
}

// TestPackTypeErrorNamesFieldNode: a mapping given for a list is named
// too.
func TestPackTypeErrorNamesFieldNode(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "agents"), 0o755)
	os.WriteFile(filepath.Join(dir, "agents", "a.md"), []byte("---\nname: a\ndescription: d\ntools:\n  save_note: yes\n---\nhi\n"), 0o644)
	_, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins()})
	if want := "agents/a.md:5: tools: a mapping is not a list"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("missing %q in:\n%v", want, err)
	}
}

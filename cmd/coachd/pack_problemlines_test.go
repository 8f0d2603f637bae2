package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPackValidateProblemLines: every pack problem says file:line, but a
// collaborates_with naming no agent file, a second default agent, an
// internal default and an MCP server defined twice (crm.yaml and
// crm.yml) were reported with the file alone.
func TestPackValidateProblemLines(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"agents/a.md":  "---\nname: a\ndescription: A coach.\ndefault: true\ncollaborates_with:\n  - b\n  - ghost\n---\nYou coach.\n",
		"agents/b.md":  "---\nname: b\ndescription: B coach.\n\ndefault: true\n---\nYou coach.\n",
		"mcp/crm.yaml": "name: crm\nurl: https://crm.example.com/mcp\n",
		"mcp/crm.yml":  "# the same server\nname: crm\nurl: https://crm.example.com/mcp\n",
	})
	var stdout bytes.Buffer
	err := run(context.Background(), []string{"coachd", "pack", "validate", dir}, getenvFrom(nil), &stdout, io.Discard)
	for _, want := range []string{
		`agents/a.md:7: collaborates_with "ghost": the pack has no agents/ghost.md`,
		`agents/b.md:5: only one agent may be the default (also agents/a.md)`,
		`mcp/crm.yml:2: MCP server "crm" is defined twice`,
	} {
		if err == nil || !strings.Contains(stdout.String(), want) {
			t.Errorf("validate: %v, missing %q in:\n%s", err, want, stdout.String())
		}
	}

	writeTree(t, dir, map[string]string{
		"agents/b.md": "---\nname: b\ndescription: B coach.\n---\nYou coach.\n",
		"agents/a.md": "---\nname: a\ndescription: A coach.\ntriggers: []\n\ndefault: true\n---\nYou coach.\n",
	})
	if err := os.Remove(filepath.Join(dir, "mcp", "crm.yml")); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	err = run(context.Background(), []string{"coachd", "pack", "validate", dir}, getenvFrom(nil), &stdout, io.Discard)
	if want := `agents/a.md:6: an agent with triggers: [] cannot be the default`; err == nil || !strings.Contains(stdout.String(), want) {
		t.Errorf("validate: %v, missing %q in:\n%s", err, want, stdout.String())
	}
}

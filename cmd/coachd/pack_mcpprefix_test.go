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

// TestPackValidateMCPPrefixClash: two MCP servers whose tools would be
// named under one prefix (crm_v2 set to crm's) would hide each other's
// tools turn by turn, and an allow, deny or requires_approval rule meant
// for one would apply to the other: a pack problem at the prefix line.
func TestPackValidateMCPPrefixClash(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"agents/coach.md": "---\nname: coach\ndescription: A coach.\nmcp: {servers: [crm, crm_v2]}\n---\nYou coach.\n",
		"mcp/crm.yaml":    "name: crm\nurl: https://crm.example.com/mcp\n",
		"mcp/crm_v2.yaml": "name: crm_v2\nurl: https://crm2.example.com/mcp\nprefix: crm\n",
	})
	var stdout bytes.Buffer
	err := run(context.Background(), []string{"coachd", "pack", "validate", dir}, getenvFrom(nil), &stdout, io.Discard)
	if want := `mcp/crm_v2.yaml:3: prefix "crm" is also mcp/crm.yaml's: the two servers' tools would share names`; err == nil || !strings.Contains(stdout.String(), want) {
		t.Fatalf("validate: %v, missing %q in:\n%s", err, want, stdout.String())
	}
	os.WriteFile(filepath.Join(dir, "mcp/crm_v2.yaml"), []byte("name: crm_v2\nurl: https://crm2.example.com/mcp\n"), 0o644)
	stdout.Reset()
	if err := run(context.Background(), []string{"coachd", "pack", "validate", dir}, getenvFrom(nil), &stdout, io.Discard); err != nil {
		t.Fatalf("distinct prefixes: %v\n%s", err, stdout.String())
	}
}

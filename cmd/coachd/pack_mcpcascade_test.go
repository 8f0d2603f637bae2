package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

// TestPackValidateMCPOneCause: an MCP server file that fails to load is
// the one problem its server has: the agents naming it (in mcp.servers,
// mcp.allow, requires_approval) are not also told it is unknown, while a
// server no file defines still is.
func TestPackValidateMCPOneCause(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"agents/coach.md": "---\nname: coach\ndescription: A coach.\nmcp: {servers: [crm, files], allow: [crm__lookup, files__read]}\nrequires_approval: [crm__write]\n---\nYou coach.\n",
		"agents/other.md": "---\nname: other\ndescription: Another.\nmcp: {servers: [crm, ghost]}\n---\nYou coach.\n",
		"mcp/crm.yaml":    "name: crm\nurl: https://crm.example.com/mcp\ntimeout: nope\n",
		"mcp/files.yaml":  "name: files\nurl: https://files.example.com/mcp\n",
	})
	var stdout bytes.Buffer
	err := run(context.Background(), []string{"coachd", "pack", "validate", dir}, getenvFrom(nil), &stdout, io.Discard)
	if err == nil {
		t.Fatal("a bad pack validated")
	}
	got := strings.TrimSpace(stdout.String())
	want := `agents/other.md:4: unknown MCP server "ghost" (no mcp/ghost.yaml)` + "\n" +
		"mcp/crm.yaml:3: timeout must be a duration like 30s, at most 5m"
	if got != want {
		t.Errorf("problems\n%s\nwant\n%s", got, want)
	}
}

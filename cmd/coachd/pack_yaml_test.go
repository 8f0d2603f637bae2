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

// TestPackValidateYAMLSyntax: a YAML syntax or type error in any pack
// file (tool, MCP server, data source, agent, skill, notes.yaml) is
// reported at file:line, the line being where the problem is, like
// every other pack problem.
func TestPackValidateYAMLSyntax(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"tools/hook.yaml":  "name: hook\ndescription: d\nurl: https://example.com/x\ninput_schema: {type: object\n",
		"tools/tab.yaml":   "name: tab\n\tdescription: d\n",
		"tools/typed.yaml": "name: typed\ndescription: d\nurl: https://example.com/x\nmax_response_bytes: lots\n",
		"mcp/m.yaml":       "name: m\nurl: https://example.com/mcp\nheaders:\n  A: b\n c: d\n",
		"data/d.yaml":      "dsn: sqlite:x.db\ntables:\n  notes: {columns: [a, b}\n",
		"agents/coach.md":  "---\nname: coach\ndescription: A coach.\ntools: [save_note\n---\nYou coach.\n",
		"skills/s.md":      "---\nname: s\nsummary: x\nwhen: {keywords: [a}\n---\n## Goal\nx\n",
		"notes.yaml":       "categories: [x]\ntypes: [a, b\n",
	})
	var stdout bytes.Buffer
	if err := run(context.Background(), []string{"coachd", "pack", "validate", dir}, getenvFrom(nil), &stdout, io.Discard); err == nil {
		t.Fatal("a pack with YAML errors validated")
	}
	got := stdout.String()
	for _, want := range []string{
		"tools/hook.yaml:4: did not find expected ',' or '}'",
		"tools/tab.yaml:2: found a tab character that violates indentation",
		"tools/typed.yaml:4: max_response_bytes: \"lots\" is not an integer",
		"mcp/m.yaml:5: did not find expected key",
		"data/d.yaml:3: did not find expected ',' or ']'",
		"agents/coach.md:4: did not find expected ',' or ']'",
		"skills/s.md:4: did not find expected ',' or ']'",
		"notes.yaml:2: did not find expected ',' or ']'",
	} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
}

// TestPackValidateToolFileLines: an operator's mistakes in a tool file
// (an input_schema that is no JSON Schema, a name that is not the
// file's) are reported at file:line, one line each, like every pack
// problem.
func TestPackValidateToolFileLines(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"agents/coach.md":  "---\nname: coach\ndescription: A coach.\n---\nYou coach.\n",
		"tools/hook.yaml":  "name: hook\ndescription: d\nurl: https://example.com/x\ninput_schema:\n  type: object\n  properties:\n    x: {type: strng}\n",
		"tools/other.yaml": "description: d\nurl: https://example.com/x\nname: othr\n",
	})
	var stdout bytes.Buffer
	if err := run(context.Background(), []string{"coachd", "pack", "validate", dir}, getenvFrom(nil), &stdout, io.Discard); err == nil {
		t.Fatal("the pack validated")
	}
	got := stdout.String()
	for _, want := range []string{
		"tools/hook.yaml:7: input_schema is not a valid JSON Schema: at /properties/x/type: value must be one of",
		`tools/other.yaml:3: tool name "othr" must match the file name "other"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
		if !strings.HasPrefix(line, "tools/") {
			t.Errorf("a problem line without its file: %q", line)
		}
	}
}

// writeTree writes files (path: content, slash-separated) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

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

// TestPackValidateMCPCommand: a stdio server's command that is not on
// PATH, or not a file of the pack, is a problem at its command line when
// the pack loads, not a warning on the first turn that mounts it.
func TestPackValidateMCPCommand(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"agents/coach.md":  "---\nname: coach\ndescription: A coach.\nmcp: {servers: [files, local, notexec, shell]}\n---\nYou coach.\n",
		"mcp/files.yaml":   "name: files\ncommand: fliesserver-no-such-program\n",
		"mcp/local.yaml":   "name: local\nargs: [-v]\ncommand: ./bin/server\n",
		"mcp/notexec.yaml": "name: notexec\ncommand: ./bin/plain\n",
		"mcp/shell.yaml":   "name: shell\ncommand: sh\n",
		"bin/plain":        "not a program\n",
	})
	validate := func() (string, error) {
		var stdout bytes.Buffer
		err := run(context.Background(), []string{"coachd", "pack", "validate", dir}, getenvFrom(nil), &stdout, io.Discard)
		return strings.TrimSpace(stdout.String()), err
	}
	got, err := validate()
	want := `mcp/files.yaml:2: command "fliesserver-no-such-program" is not on PATH` + "\n" +
		`mcp/local.yaml:3: command "./bin/server" is not a file of the pack (a path is taken from the pack directory)` + "\n" +
		`mcp/notexec.yaml:2: command "./bin/plain" is not executable`
	if err == nil || got != want {
		t.Fatalf("validate: %v\n%s\nwant\n%s", err, got, want)
	}
	os.WriteFile(filepath.Join(dir, "bin/server"), []byte("#!/bin/sh\n"), 0o755)
	os.Chmod(filepath.Join(dir, "bin/plain"), 0o755)
	os.WriteFile(filepath.Join(dir, "mcp/files.yaml"), []byte("name: files\ncommand: sh\n"), 0o644)
	if got, err := validate(); err != nil {
		t.Fatalf("with the commands there: %v\n%s", err, got)
	}
}

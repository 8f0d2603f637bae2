package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseConfig(t *testing.T) {
	env := map[string]string{"TOKEN": "t0k", "BIN": "/usr/bin/srv"}
	getenv := func(k string) string { return env[k] }
	t.Run("OKStdio", func(t *testing.T) {
		c, err := ParseConfig("mcp/files.yaml", []byte(`name: files
command: ${BIN}
args: [--root, "${ROOT:-/srv}"]
env: {API_TOKEN: "${TOKEN}"}
timeout: 10s
max_output: 4096
allow: [read_*]
deny: [read_secret]
`), getenv)
		if err != nil {
			t.Fatal(err)
		}
		if c.Command != "/usr/bin/srv" || strings.Join(c.Args, " ") != "--root /srv" || c.Env["API_TOKEN"] != "t0k" ||
			c.Prefix != "files" || c.Timeout != 10*time.Second || c.MaxOutput != 4096 {
			t.Fatalf("config = %+v", c)
		}
	})
	t.Run("OKHTTP", func(t *testing.T) {
		c, err := ParseConfig("mcp/crm_api.yaml", []byte("name: crm_api\nurl: https://crm.example/mcp\nheaders: {Authorization: \"Bearer ${TOKEN}\"}\n"), getenv)
		if err != nil {
			t.Fatal(err)
		}
		if c.Headers.Get("Authorization") != "Bearer t0k" || c.Prefix != "crm-api" || c.Timeout != DefaultTimeout || c.MaxOutput != DefaultMaxOutput {
			t.Fatalf("config = %+v", c)
		}
	})
	t.Run("ErrProblems", func(t *testing.T) {
		_, err := ParseConfig("mcp/bad.yaml", []byte(`name: Bad
command: srv
url: http://x
prefix: "has space"
timeout: 10m
max_output: 99999999
allow: ["[bad"]
colour: blue
`), getenv)
		if err == nil {
			t.Fatal("accepted")
		}
		for _, want := range []string{
			"mcp/bad.yaml:1: name must be a lowercase name",
			"mcp/bad.yaml:3: command (stdio) and url (streamable HTTP) exclude each other",
			"mcp/bad.yaml:4: prefix must be",
			"mcp/bad.yaml:5: timeout must be a duration like 30s, at most 5m",
			"mcp/bad.yaml:6: max_output must be between 256 and 1048576 bytes",
			"mcp/bad.yaml:7: allow: \"[bad\" is not a valid pattern",
			"mcp/bad.yaml:8: unknown key \"colour\"",
		} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("missing %q in:\n%v", want, err)
			}
		}
	})
	t.Run("ErrMissingEnv", func(t *testing.T) {
		_, err := ParseConfig("mcp/x.yaml", []byte("name: x\nurl: https://h/mcp\nheaders: {X-Key: \"${NOPE}\"}\n"), getenv)
		if err == nil || !strings.Contains(err.Error(), "mcp/x.yaml:3: environment variable NOPE is not set") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("ErrNeither", func(t *testing.T) {
		_, err := ParseConfig("mcp/x.yaml", []byte("name: x\n"), getenv)
		if err == nil || !strings.Contains(err.Error(), "command (a stdio server) or url") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("ErrNameMismatch", func(t *testing.T) {
		_, err := ParseConfig("mcp/x.yaml", []byte("name: y\ncommand: srv\n"), getenv)
		if err == nil || !strings.Contains(err.Error(), `name "y" must match the file name "x"`) {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestReadmeExamples: the README's MCP server files are valid.
func TestReadmeExamples(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, block := range strings.Split(string(readme), "```yaml\n")[1:] {
		block = block[:strings.Index(block, "```")]
		first, _, _ := strings.Cut(block, "\n")
		name, ok := strings.CutPrefix(first, "# mcp/")
		if !ok {
			continue
		}
		file := "mcp/" + strings.Fields(name)[0]
		file = strings.TrimSuffix(file, ":")
		if _, err := ParseConfig(file, []byte(block), func(string) string { return "x" }); err != nil {
			t.Errorf("README %s: %v", file, err)
		}
		n++
	}
	if n != 2 {
		t.Errorf("found %d README examples, want 2", n)
	}
}

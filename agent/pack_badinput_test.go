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

// Bad input in a pack's agent file, one row per kind of bad input: each is
// reported as a problem naming the file, and nothing panics or reads
// without bound. (Issue 18's bad-input suite for the pack-file surface.)
func TestPackBadInput(t *testing.T) {
	const head = "---\nname: a\ndescription: d\n"
	for _, tc := range []struct{ name, body string }{
		{"Oversized", head + "---\n" + strings.Repeat("x", 2<<20)},
		{"DeepNestingSequence", head + "tools: " + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + "\n---\nHi"},
		{"DeepNestingMapping", head + "limits: " + strings.Repeat("{a: ", 50_000) + "1" + strings.Repeat("}", 50_000) + "\n---\nHi"},
		{"InvalidUTF8FrontMatter", head + "description: \xff\xfe\n---\nHi"},
		{"InvalidUTF8Prompt", head + "---\nHello \xff\xfe there"},
		{"NULFrontMatter", head + "description: a\x00b\n---\nHi"},
		{"NULPrompt", head + "---\nHello\x00there"},
		{"DuplicateKeys", head + "name: b\n---\nHi"},
		{"OutOfRangeNumber", head + "max_tokens: 1e400\n---\nHi"},
		{"IntegerOverflow", head + "max_tokens: 99999999999999999999999\n---\nHi"},
		{"NegativeLimit", head + "max_tokens: -5\n---\nHi"},
		{"WrongType", head + "tools: {save_note: true}\n---\nHi"},
		{"UnclosedFrontMatter", head + "tools: [save_note]\nHi"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "agents", "a.md")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins()})
			var pe *agent.PackError
			if !errors.As(err, &pe) || len(pe.Problems) == 0 {
				t.Fatalf("loaded without a problem (err %v)", err)
			}
			for _, pr := range pe.Problems {
				if pr.File != "agents/a.md" {
					t.Errorf("problem names %q, want agents/a.md: %+v", pr.File, pr)
				}
			}
		})
	}
}

// The pack's optional files get the same checks.
func TestPackBadInputOptionalFiles(t *testing.T) {
	for _, file := range []string{"schema.md", "notes.yaml"} {
		for name, body := range map[string]string{"NUL": "a\x00b", "InvalidUTF8": "a\xffb", "Oversized": strings.Repeat("x", agent.MaxPackFile+1)} {
			t.Run(file+"/"+name, func(t *testing.T) {
				dir := t.TempDir()
				os.MkdirAll(filepath.Join(dir, "agents"), 0o755)
				os.WriteFile(filepath.Join(dir, "agents", "a.md"), []byte("---\nname: a\ndescription: d\n---\nHi"), 0o644)
				os.WriteFile(filepath.Join(dir, file), []byte(body), 0o644)
				_, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins()})
				var pe *agent.PackError
				if !errors.As(err, &pe) || len(pe.Problems) == 0 || pe.Problems[0].File != file {
					t.Fatalf("got %v, want a problem in %s", err, file)
				}
			})
		}
	}
}

package agent_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/review"
	"github.com/coachd/coachd/tools"
)

// TestPackBrokenFileOneCause: an agent or skill file whose YAML does not
// parse is the one problem the pack reports for it. A stray quote in
// sage.md's front matter was reported with eleven more, one per skill
// rule ("no agent of the pack may write that file type": the permissions
// were in the file that failed), the real one lost among them; a skill
// file that did not parse made the agents listing it report it unknown,
// although skills/<name>.md is there.
func TestPackBrokenFileOneCause(t *testing.T) {
	t.Run("Agent", func(t *testing.T) {
		got := sageWith(t, "temperature: 0.7", "temperature: \"0.7")
		if want := "coach pack: 1 problem(s):\nagents/sage.md:6: found unexpected end of stream"; got != want {
			t.Fatalf("problems:\n%s\nwant:\n%s", got, want)
		}
	})
	t.Run("Collaborator", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "examples", "autobuild"))); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "agents", "autobuild-player.md")
		b, _ := os.ReadFile(path)
		os.WriteFile(path, []byte(strings.Replace(string(b), "model: haiku", "model: [haiku", 1)), 0o644)
		_, err := agent.LoadPack(dir, agent.PackOptions{Builtins: append(tools.Builtins(), review.Unbound()...)})
		var pe *agent.PackError
		if !errors.As(err, &pe) || len(pe.Problems) != 1 || pe.Problems[0].File != "agents/autobuild-player.md" {
			t.Fatalf("problems: %v", err)
		}
	})
	t.Run("Skill", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "examples", "sage"))); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "skills", "open-day.md")
		b, _ := os.ReadFile(path)
		os.WriteFile(path, []byte(strings.Replace(string(b), "summary: ", "summary: \"", 1)), 0o644)
		_, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins()})
		var pe *agent.PackError
		if !errors.As(err, &pe) || len(pe.Problems) != 1 || pe.Problems[0].File != "skills/open-day.md" {
			t.Fatalf("problems: %v", err)
		}
	})
}

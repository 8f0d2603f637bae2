package agent_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/tools"
)

// FuzzLoadPack feeds arbitrary agent and skill files to the pack loader:
// it must never panic, and a pack it refuses must come with problems that
// each name a file of the pack.
func FuzzLoadPack(f *testing.F) {
	agentMD, _ := os.ReadFile("../examples/sage/agents/sage.md")
	skillMD, _ := os.ReadFile("../examples/sage/skills/open-day.md")
	f.Add(string(agentMD), string(skillMD))
	f.Add("---\nname: a\ntools: [save_note]\n---\nHi", "---\nname: s\nsummary: x\n---\n## Goal\n")
	f.Add("---\n---\n", "no front matter")
	f.Add("---\nname: [\n---\n", "---\nwhen:\n  - mode: 7\n---\n")
	f.Fuzz(func(t *testing.T, agentFile, skillFile string) {
		dir := t.TempDir()
		for path, body := range map[string]string{"agents/a.md": agentFile, "skills/s.md": skillFile} {
			p := filepath.Join(dir, path)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		p, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins()})
		if err == nil {
			if p == nil {
				t.Fatal("no pack and no error")
			}
			return
		}
		var pe *agent.PackError
		if !errors.As(err, &pe) || len(pe.Problems) == 0 {
			t.Fatalf("error without problems: %v", err)
		}
		for _, pr := range pe.Problems {
			if pr.File != "agents/a.md" && pr.File != "skills/s.md" && pr.File != "." && pr.File != "" {
				t.Fatalf("problem names a file outside the pack: %+v", pr)
			}
		}
	})
}

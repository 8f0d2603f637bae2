package agent_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/tools"
)

// TestSkillSizeBounded: a skill's text goes into the prompt of every turn
// its rule holds (and whole into a load_skill result), so its size is a
// pack problem past agent.MaxSkillBytes, at the body's first line. Any
// pack file up to 1 MiB was taken: a 600 KiB skill (a pasted manual)
// loaded, and each turn it applied to sent ~150k tokens more, or failed
// at the API as too long.
func TestSkillSizeBounded(t *testing.T) {
	load := func(body string) error {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "agents"), 0o755)
		os.MkdirAll(filepath.Join(dir, "skills"), 0o755)
		os.WriteFile(filepath.Join(dir, "agents", "a.md"), []byte("---\nname: a\ndescription: d\nskills: [s]\n---\nhi\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "skills", "s.md"), []byte("---\nname: s\nsummary: one line\nwhen:\n  - time_of_day: morning\n---\n"+
			"## Goal\n## When to Use\n## Context Needed\n## Tools to Use\n## Constraints\n## Guidance\n"+body), 0o644)
		_, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins()})
		return err
	}
	if err := load(strings.Repeat("Be kind. ", 1000)); err != nil {
		t.Fatalf("a 9 KB skill: %v", err)
	}
	err := load(strings.Repeat("Be kind. ", 600<<10/9))
	if err == nil || !strings.Contains(err.Error(), "skills/s.md:7: the skill is") {
		t.Fatalf("a 600 KiB skill: %v", err)
	}
}

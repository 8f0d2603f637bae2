package agent_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/tools"
)

// TestActiveSkillsBounded: the skills whose rules hold in a turn are
// added to its prompt together within agent.MaxActiveSkillBytes, in the
// order the agent lists them; the rest are named, for the model to
// load_skill. Each skill was bounded (32 KiB) but not their sum: eight
// skills that all hold put ~240 KiB (~60k tokens) into every turn's
// system prompt, or failed at the API as too long.
func TestActiveSkillsBounded(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "agents"), 0o755)
	os.MkdirAll(filepath.Join(dir, "skills"), 0o755)
	var names []string
	for i := range 8 {
		name := fmt.Sprintf("s%d", i)
		names = append(names, name)
		os.WriteFile(filepath.Join(dir, "skills", name+".md"), []byte("---\nname: "+name+"\nsummary: one line\nwhen:\n  - time_of_day: [morning, afternoon, evening, night]\n---\n"+
			"## Goal\n## When to Use\n## Context Needed\n## Tools to Use\n## Constraints\n## Guidance\n"+strings.Repeat("Be kind. ", 30<<10/9)), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "agents", "a.md"), []byte("---\nname: a\ndescription: d\nskills: ["+strings.Join(names, ", ")+"]\n---\nhi\n"), 0o644)
	p, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins()})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	h := newPackHarness(t, p, nil)
	h.fake.Enqueue(anthropictest.Text("Hello.", 5))
	if res := h.turn(agent.TurnRequest{Message: "hi"}, &sink{}); res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("stop %s %v", res.StopReason, res.Err)
	}
	var system []struct{ Text string }
	b, _ := json.Marshal(h.fake.Requests()[0].Body["system"])
	if err := json.Unmarshal(b, &system); err != nil {
		t.Fatal(err)
	}
	all := ""
	for _, s := range system {
		all += s.Text
	}
	if len(all) > agent.MaxActiveSkillBytes+8<<10 {
		t.Fatalf("system prompt is %d KiB with eight 30 KiB skills active, want within %d KiB", len(all)>>10, agent.MaxActiveSkillBytes>>10)
	}
	if !strings.Contains(all, `<skill name="s0">`) || !strings.Contains(all, `<skill name="s1">`) {
		t.Errorf("the first skills the agent lists are not in the prompt")
	}
	if strings.Contains(all, `<skill name="s7">`) || !strings.Contains(all, "s7") || !strings.Contains(all, "load_skill") {
		t.Errorf("the skills left out are not named for load_skill")
	}
}

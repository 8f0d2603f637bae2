package agent_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/tools"
)

// A when rule whose conditions say nothing (an empty list, a null, a
// status_file_type without file_status) would hold always and load the
// skill into every turn: it is a problem, not a rule.
func TestSkillRuleWithoutCondition(t *testing.T) {
	const body = "---\n## Goal\n## When to Use\n## Context Needed\n## Tools to Use\n## Constraints\n## Guidance\n"
	load := func(when string) error {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "agents"), 0o755)
		os.MkdirAll(filepath.Join(dir, "skills"), 0o755)
		os.WriteFile(filepath.Join(dir, "agents", "a.md"), []byte("---\nname: a\ndescription: d\nskills: [s]\npermissions: {default: [domain]}\n---\nhi\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "skills", "s.md"), []byte("---\nname: s\nsummary: one line\nwhen:\n"+when+body), 0o644)
		_, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins()})
		return err
	}
	for _, when := range []string{
		"  - mode: []\n",
		"  - mode: ~\n",
		"  - checkin_due: null\n",
		"  - status_file_type: domain\n",
		"  - time_of_day: [morning]\n  - has_file: []\n",
	} {
		err := load(when)
		if err == nil || !strings.Contains(err.Error(), "skills/s.md") {
			t.Errorf("%q: %v, want a problem in skills/s.md", when, err)
		}
	}
	for _, when := range []string{
		"  - mode: \"\"\n", // no mode: a plain conversation
		"  - checkin_due: false\n",
		"  - file_status: in_crisis\n    status_file_type: domain\n",
	} {
		if err := load(when); err != nil {
			t.Errorf("%q: %v", when, err)
		}
	}
}

// A skill listed twice would be summarised twice and, when its rule holds,
// have its full text in the prompt twice: it is a problem, like a tool
// listed twice.
func TestAgentSkillListedTwice(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "agents"), 0o755)
	os.MkdirAll(filepath.Join(dir, "skills"), 0o755)
	os.WriteFile(filepath.Join(dir, "agents", "a.md"), []byte("---\nname: a\ndescription: d\nskills: [s, s]\n---\nhi\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "skills", "s.md"), []byte("---\nname: s\nsummary: one line\n---\n## Goal\n## When to Use\n## Context Needed\n## Tools to Use\n## Constraints\n## Guidance\n"), 0o644)
	_, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins()})
	if err == nil || !strings.Contains(err.Error(), `agents/a.md:4: skill "s" listed twice`) {
		t.Fatalf("got %v, want skill listed twice", err)
	}
}

// checkin_due reads the agent's context.checkin: an agent without one
// never has a check-in due, so a skill it lists with checkin_due: true
// would never load. pack validate says so on the agent's skills line.
func TestSkillCheckinRuleNeedsAgentCheckin(t *testing.T) {
	const skill = "---\nname: s\nsummary: one line\nwhen:\n  - checkin_due: true\n---\n## Goal\n## When to Use\n## Context Needed\n## Tools to Use\n## Constraints\n## Guidance\n"
	load := func(front string) error {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "agents"), 0o755)
		os.MkdirAll(filepath.Join(dir, "skills"), 0o755)
		os.WriteFile(filepath.Join(dir, "agents", "a.md"), []byte("---\nname: a\ndescription: d\nskills: [s]\n"+front+"---\nhi\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "skills", "s.md"), []byte(skill), 0o644)
		_, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins()})
		return err
	}
	if err := load(""); err == nil || !strings.Contains(err.Error(), "agents/a.md:4: skill \"s\"") || !strings.Contains(err.Error(), "checkin") {
		t.Errorf("no context.checkin: %v, want a problem naming skill s and checkin", err)
	}
	if err := load("permissions: {default: [check-in]}\ncontext:\n  checkin:\n    file_type: check-in\n    every_days: 7\n"); err != nil {
		t.Errorf("with context.checkin: %v", err)
	}
}

// A mode rule names a session mode, which is one of the agent's arcs
// (enter_structured_arc refuses any other): a mode outside them, a typo
// like life_maping, would never hold, so the skill would never load.
func TestSkillModeRuleNamesAnArc(t *testing.T) {
	load := func(mode, arcs string) error {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "agents"), 0o755)
		os.MkdirAll(filepath.Join(dir, "skills"), 0o755)
		os.WriteFile(filepath.Join(dir, "agents", "a.md"), []byte("---\nname: a\ndescription: d\nskills: [s]\n"+arcs+"---\nhi\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "skills", "s.md"), []byte("---\nname: s\nsummary: one line\nwhen:\n  - mode: "+mode+
			"\n---\n## Goal\n## When to Use\n## Context Needed\n## Tools to Use\n## Constraints\n## Guidance\n"), 0o644)
		_, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins()})
		return err
	}
	if err := load("life_maping", "arcs: [life_mapping]\n"); err == nil || !strings.Contains(err.Error(), `agents/a.md:4: skill "s"`) || !strings.Contains(err.Error(), "life_maping") {
		t.Errorf("typo: %v, want a problem naming the mode", err)
	}
	if err := load("weekly", "permissions:\n  default: []\n  life_mapping: [overview]\n"); err == nil || !strings.Contains(err.Error(), "weekly") {
		t.Errorf("mode outside the permission modes: %v", err)
	}
	for _, ok := range []struct{ mode, arcs string }{
		{"life_mapping", "arcs: [life_mapping]\n"},
		{"\"\"", "arcs: [life_mapping]\n"}, // no mode
		{"anything", ""},                   // no arcs declared: any arc may be entered
	} {
		if err := load(ok.mode, ok.arcs); err != nil {
			t.Errorf("%+v: %v", ok, err)
		}
	}
}

package agent_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/tools"
)

// A when rule naming a file type no agent of the pack may write (a typo:
// jurnal for journal) tests files that can never exist: missing_file and
// no_file_today would hold on every turn and load the skill into each.
// It is a problem at the condition's line.
func TestSkillRuleNamesUnknownFileType(t *testing.T) {
	load := func(when string) error {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "agents"), 0o755)
		os.MkdirAll(filepath.Join(dir, "skills"), 0o755)
		os.WriteFile(filepath.Join(dir, "agents", "a.md"), []byte("---\nname: a\ndescription: d\ntools: [save_file]\nskills: [s]\n"+
			"permissions:\n  default: [journal]\n  weekly: [weekly-plan]\n---\nhi\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "skills", "s.md"), []byte("---\nname: s\nsummary: one line\nwhen:\n"+when+
			"---\n## Goal\n## When to Use\n## Context Needed\n## Tools to Use\n## Constraints\n## Guidance\n"), 0o644)
		_, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins()})
		return err
	}
	for when, want := range map[string]string{
		"  - missing_file: jurnal\n":                                     `skills/s.md:5: missing_file "jurnal"`,
		"  - time_of_day: morning\n    no_file_today: [journal, plan]\n": `skills/s.md:6: no_file_today "plan"`,
		"  - has_file: [weekly_plan]\n":                                  `skills/s.md:5: has_file "weekly_plan"`,
		"  - file_today: x\n":                                            `skills/s.md:5: file_today "x"`,
		"  - file_status: good\n    status_file_type: jurnal\n":          `skills/s.md:6: status_file_type "jurnal"`,
	} {
		if err := load(when); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", when, err, want)
		}
	}
	for _, when := range []string{
		"  - missing_file: journal\n",
		"  - no_file_today: [journal, weekly-plan]\n",
		"  - has_file: pulse-baseline\n", // show_pulse_check writes it
	} {
		if err := load(when); err != nil {
			t.Errorf("%q: %v", when, err)
		}
	}
}

// The check-in is due while no file of its type was written lately: a
// type no agent may write (check_in for check-in) would make it due on
// every turn, and with it every checkin_due skill.
func TestCheckinNamesUnknownFileType(t *testing.T) {
	load := func(fileType string) error {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "agents"), 0o755)
		os.WriteFile(filepath.Join(dir, "agents", "a.md"), []byte("---\nname: a\ndescription: d\ntools: [save_file]\n"+
			"permissions:\n  default: [check-in]\ncontext:\n  checkin:\n    file_type: "+fileType+"\n    every_days: 7\n---\nhi\n"), 0o644)
		_, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins()})
		return err
	}
	if err := load("check_in"); err == nil || !strings.Contains(err.Error(), `agents/a.md:9: checkin file_type "check_in"`) {
		t.Errorf("typo: %v", err)
	}
	if err := load("check-in"); err != nil {
		t.Errorf("check-in: %v", err)
	}
}

package agent_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/coachd/coachd/agent"
)

// TestPackTypeErrorNamesField: a value of the wrong type in an agent or
// skill file is reported at its line naming the field and what it
// takes. It was yaml.v3's Go jargon with no field ("cannot unmarshal
// !!str `lots` into int64"): on a line of a flow mapping ({max_rounds:
// 3, max_tool_calls: many}) an author could not tell which was meant.
func TestPackTypeErrorNamesField(t *testing.T) {
	_, err := loadPackFiles(t, map[string]string{
		"agents/a.md": "---\nname: a\ndescription: d\nskills: [s]\nmax_tokens: lots\nlimits: {max_rounds: 3, max_tool_calls: many}\n---\nhi\n",
		"skills/s.md": "---\nname: s\nsummary: one line\nwhen:\n  - checkin_due: maybe\n---\n" +
			"## Goal\n## When to Use\n## Context Needed\n## Tools to Use\n## Constraints\n## Guidance\n",
	})
	if err == nil {
		t.Fatal("the pack loaded")
	}
	for _, want := range []string{
		"agents/a.md:5: max_tokens: \"lots\" is not an integer",
		"agents/a.md:6: limits.max_tool_calls: \"many\" is not an integer",
		"skills/s.md:5: when.checkin_due: \"maybe\" is not true or false",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
}

// TestPackTypeErrorNamesFieldNode: a mapping given for a list is named
// too.
func TestPackTypeErrorNamesFieldNode(t *testing.T) {
	_, err := loadPackFiles(t, map[string]string{"agents/a.md": "---\nname: a\ndescription: d\ntools:\n  save_note: yes\n---\nhi\n"})
	if want := "agents/a.md:5: tools: a mapping is not a list"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("missing %q in:\n%v", want, err)
	}
}

// TestPackTypeErrorKeepsChecking: a value of the wrong type is one
// problem among the file's others, which are all reported (README:
// "every problem"). The file's other checks stopped at it: a misspelt
// limits key was reported only after the type error was fixed.
func TestPackTypeErrorKeepsChecking(t *testing.T) {
	_, err := loadPackFiles(t, map[string]string{"agents/a.md": "---\nname: a\ndescription: d\nmax_tokens: lots\nlimits:\n  max_round: 3\ntools: [nope]\n---\nhi\n"})
	for _, want := range []string{
		"agents/a.md:4: max_tokens: \"lots\" is not an integer",
		"agents/a.md:6: unknown key \"max_round\"",
		"agents/a.md:7: unknown tool \"nope\"",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
}

// TestPackTypeErrorAnyKey: a value of any wrong shape under any key, at
// the top or one level down, is a problem, never a panic, now that the
// checks go on past it.
func TestPackTypeErrorAnyKey(t *testing.T) {
	keys := strings.Fields("action_tags arcs collaborates_with commands compaction context contracts default description fallback_model " +
		"free_preview_turns limits max_tokens mcp model on_disconnect permissions provider requires_approval reserve session_expiry " +
		"skills temperature thinking tools triggers voice mode time_of_day missing_file has_file file_today no_file_today checkin_due file_status status_file_type")
	nested := map[string][]string{
		"context":     strings.Fields("sections budgets checkin standing recent recent_days timezone"),
		"contracts":   strings.Fields("must_call must_not must_not_call must_output max_repairs ordered"),
		"limits":      strings.Fields("max_rounds max_duration tool_timeout max_tool_calls breaker_rounds"),
		"compaction":  strings.Fields("shorten_after summarize_after keep_turns shorten_over"),
		"permissions": {"default"},
	}
	var docs []string
	for _, v := range []string{"lots", "[1, x]", "{a: 1}", "5", "true"} {
		for _, k := range keys {
			docs = append(docs, k+": "+v)
			for _, n := range nested[k] {
				docs = append(docs, k+":\n  "+n+": "+v)
			}
		}
	}
	for _, doc := range docs {
		if p, err := loadPackFiles(t, map[string]string{
			"agents/a.md": "---\nname: a\ndescription: d\nskills: [s]\n" + doc + "\n---\nhi\n",
			"skills/s.md": "---\nname: s\nsummary: x\nwhen:\n  - " + strings.ReplaceAll(doc, "\n", "\n  ") + "\n---\n## Goal\n",
		}); err == nil {
			p.Close()
		}
	}
}

// TestPackTypeErrorOneProblem: the field a type error left zero is not
// reported again as missing or malformed at the same line.
func TestPackTypeErrorOneProblem(t *testing.T) {
	_, err := loadPackFiles(t, map[string]string{"agents/a.md": "---\nname: a\ndescription: [d]\n---\nhi\n"})
	var pe *agent.PackError
	if !errors.As(err, &pe) || len(pe.Problems) != 1 || pe.Problems[0].String() != "agents/a.md:3: description: a list is not a string" {
		t.Fatalf("got %v, want one problem: agents/a.md:3: description: a list is not a string", err)
	}
}

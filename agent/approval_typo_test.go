package agent_test

import (
	"strings"
	"testing"

	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/tools"
)

// TestApprovalRuleValueType: a condition on a number field whose value is
// a string that reads as no number ("1,000", "high") could never hold:
// the rule would let every call through unasked. It is a problem at its
// line; a string that is a number ("100") is taken as the number.
func TestApprovalRuleValueType(t *testing.T) {
	dir := writeAgent(t, `tools: [save_note]
requires_approval:
  - tool: save_note
    when: {importance: {gt: "1,000"}}
  - tool: save_note
    when: {importance: high}
  - tool: save_note
    when: {importance: {in: [5, "ten"]}}
`)
	_, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins()})
	if err == nil {
		t.Fatal("loaded")
	}
	for _, want := range []string{
		`coach.md:7: requires_approval: importance: importance is a number: "1,000" is not one`,
		`coach.md:9: requires_approval: importance: importance is a number: "high" is not one`,
		`coach.md:11: requires_approval: importance: importance is a number: "ten" is not one`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
	dir = writeAgent(t, "tools: [save_note]\nrequires_approval:\n  - tool: save_note\n    when: {importance: {gte: \"50\"}, title: {eq: \"50\"}}\n")
	p, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins()})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := p.Agent("coach")
	if c := a.Approvals[0].When; c[0].Value != 50.0 || c[1].Value != "50" {
		t.Fatalf("conditions %+v: want importance's value the number 50, title's the string", c)
	}
}

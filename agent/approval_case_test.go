package agent_test

import (
	"encoding/json"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
)

// TestApprovalValueCase: a rule's string value matches the input's in any
// case for eq, in and contains, the conditions that make a call wait: a
// payment app takes "eur" for EUR (Stripe's currency codes are
// lowercase), and "content contains password" means "Password" too. A
// model writing the other case ran the call unasked. ne stays exact: a
// looser ne would hold less often, and let calls through.
func TestApprovalValueCase(t *testing.T) {
	def := coachd.ToolDef{Name: "t"}
	for _, c := range []struct {
		name  string
		cond  agent.Condition
		input string
		want  bool
	}{
		{"Eq", agent.Condition{Field: "currency", Op: "eq", Value: "EUR"}, `{"currency":"eur"}`, true},
		{"In", agent.Condition{Field: "currency", Op: "in", Value: []any{"EUR", "GBP"}}, `{"currency":"gbp"}`, true},
		{"ContainsString", agent.Condition{Field: "content", Op: "contains", Value: "password"}, `{"content":"my PassWord is x"}`, true},
		{"ContainsList", agent.Condition{Field: "tags", Op: "contains", Value: "secret"}, `{"tags":["Secret"]}`, true},
		{"EqOther", agent.Condition{Field: "currency", Op: "eq", Value: "EUR"}, `{"currency":"usd"}`, false},
		{"NeExact", agent.Condition{Field: "currency", Op: "ne", Value: "USD"}, `{"currency":"usd"}`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := &agent.Agent{Approvals: []agent.ApprovalRule{{Tool: "t", When: []agent.Condition{c.cond}}}}
			if _, got := a.ApprovalReason(def, json.RawMessage(c.input)); got != c.want {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
}

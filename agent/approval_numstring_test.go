package agent_test

import (
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/tools"
)

// TestApprovalNumericString: a rule "refund: amount > 100" holds for an
// amount the model writes as a string, "500", when the tool's schema
// lets a string through (a webhook without input_schema, or one taking
// number or string): the app reads it as 500 (Python's pydantic and
// FastAPI coerce it, JavaScript compares "500" > 100 as true), so the
// call must wait for the user. It ran at once: the comparison of a string
// with a number did not hold.
func TestApprovalNumericString(t *testing.T) {
	ag := agent.DefaultAgent()
	ag.Tools = append(ag.Tools, "echo")
	ag.Approvals = []agent.ApprovalRule{{Tool: "echo", When: []agent.Condition{{Field: "amount", Op: "gt", Value: 100.0}}}}
	for _, in := range []string{`{"amount":"500"}`, `{"amount":" 5e2 "}`} {
		h := harnessOver(t, append(tools.Builtins(), echoTool), func(string) (*agent.Agent, bool) { return ag, true })
		h.fake.Enqueue(anthropictest.Blocks(use("r1", "echo", in)), anthropictest.Text("Refunded.", 3))
		s := &sink{}
		res := h.turn(agent.TurnRequest{Message: "refund me"}, s)
		if res.StopReason != coachd.TurnAwaitingInput {
			t.Errorf("%s: stop %s, results %+v; want it to wait for approval", in, res.StopReason, s.of(coachd.EventToolResult))
		}
	}
	// A string that is no number is still not one over 100.
	h := harnessOver(t, append(tools.Builtins(), echoTool), func(string) (*agent.Agent, bool) { return ag, true })
	h.fake.Enqueue(anthropictest.Blocks(use("r1", "echo", `{"amount":"a lot"}`)), anthropictest.Text("Refunded.", 3))
	s := &sink{}
	if res := h.turn(agent.TurnRequest{Message: "refund me"}, s); res.StopReason != coachd.TurnEndTurn ||
		!strings.Contains(s.of(coachd.EventToolResult)[0].Result, "a lot") {
		t.Errorf("a lot: stop %s", res.StopReason)
	}
}

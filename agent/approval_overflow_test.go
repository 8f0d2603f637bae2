package agent_test

import (
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestApprovalUndecodableInput: an input that does not decode into Go
// values (a number beyond float64, 1e999) must not slip past a
// conditional rule (charge: amount > 100). Such a number is refused with
// the input's other problems (TestSecurityToolInputNumbers), before any
// rule is read: the call never runs, and the model reads which field to
// fix.
func TestApprovalUndecodableInput(t *testing.T) {
	for _, in := range []string{`{"amount":1e999}`, `{"amount":-1e999,"note":"x"}`} {
		ah := newApprovalHarness(t)
		ah.fake.Enqueue(anthropictest.Blocks(use("c1", "charge", in)), anthropictest.Text("Done.", 3))
		s := &sink{}
		ah.turn(agent.TurnRequest{Message: "charge"}, s)
		results := s.of(coachd.EventToolResult)
		if ah.charges.Load() != 0 || len(results) != 1 || !results[0].IsError || !strings.Contains(results[0].Result, "amount: is a number out of range") {
			t.Errorf("%s: ran %d times, results %+v; want it refused, naming amount", in, ah.charges.Load(), results)
		}
	}
}

// TestApprovalCaseVariantKey: Go's encoding/json (a Go webhook app, most
// Go MCP servers) and .NET read {"Amount": 500} into the field amount,
// so a rule on amount must hold for a key that differs only in case;
// otherwise the model passes "charge: amount > 100" by writing Amount.
func TestApprovalCaseVariantKey(t *testing.T) {
	for _, in := range []string{`{"Amount":500}`, `{"amount":5,"AMOUNT":500}`} {
		ah := newApprovalHarness(t)
		ah.fake.Enqueue(anthropictest.Blocks(use("c1", "charge", in)), anthropictest.Text("Done.", 3))
		s := &sink{}
		res := ah.turn(agent.TurnRequest{Message: "charge"}, s)
		if res.StopReason != coachd.TurnAwaitingInput || ah.charges.Load() != 0 {
			t.Errorf("%s: stop %s, ran %d times; want it to wait for approval", in, res.StopReason, ah.charges.Load())
		}
	}
}

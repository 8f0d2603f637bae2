package agent_test

import (
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestMustOutputResult: a turn that met its must_output contract gives the
// final reply's JSON object as the result's output, fence removed. The
// result had only text, every round's text run together ("Let me
// check.```json {…}```", or a repaired reply after the one refused): a
// client of POST /v1/chat could not parse the output the contract
// guarantees.
func TestMustOutputResult(t *testing.T) {
	h := contractHarness(t)
	h.fake.Enqueue(
		anthropictest.Blocks(anthropictest.TextBlock("Let me check.", 3), use("e1", "echo", `{}`)),
		anthropictest.Text("Looks fine to me.", 6),
		anthropictest.Text("```json\n{\"decision\": \"approve\"}\n```", 6),
	)
	res := h.turn(agent.TurnRequest{Message: "check it"}, &sink{})
	if res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("stop %s %v", res.StopReason, res.Err)
	}
	if string(res.Output) != `{"decision": "approve"}` {
		t.Fatalf("output %q (text %q)", res.Output, res.Text)
	}
}

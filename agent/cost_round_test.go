package agent_test

import (
	"strconv"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestTurnCostIsRounded: a turn's cost_usd is the sum of its rounds' list
// prices; summed as floats, two rounds of 0.002598 and 0.00213 dollars
// came out as 0.0047279999999999996, and the client showed that. The
// usage event carries it rounded to a billionth of a dollar.
func TestTurnCostIsRounded(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	h.fake.Enqueue(anthropictest.Blocks(use("toolu_1", "echo", `{}`)).WithUsage(usage(526, 68)))
	h.fake.Enqueue(anthropictest.Text("Done.", 5).WithUsage(usage(675, 7)))
	s := &sink{}
	h.turn(agent.TurnRequest{Message: "go"}, s)
	m := h.agent.Model
	raw := coachd.Cost(m, usage(526, 68)) + coachd.Cost(m, usage(675, 7))
	if got := strconv.FormatFloat(raw, 'g', -1, 64); got == "0.004728" {
		t.Fatalf("the rounds' costs sum to %s as floats: the test needs a sum with float noise", got)
	}
	evs := s.of(coachd.EventUsage)
	if len(evs) != 2 {
		t.Fatalf("%d usage events, want 2", len(evs))
	}
	for i, want := range []string{"0.002598", "0.004728"} {
		if got := strconv.FormatFloat(evs[i].Usage.CostUSD, 'g', -1, 64); got != want {
			t.Errorf("usage event %d: cost_usd %s, want %s", i, got, want)
		}
	}
	if got := strconv.FormatFloat(s.of(coachd.EventTurnEnded)[0].Usage.CostUSD, 'g', -1, 64); got != "0.004728" {
		t.Errorf("turn_ended: cost_usd %s, want 0.004728", got)
	}
}

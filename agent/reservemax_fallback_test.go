package agent_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/tools"
)

// TestReserveMaxFallbackPrice: reserve: max promises spend never exceeds
// the hold; a round the fallback model serves is charged at the fallback
// model's prices, so in a budget unit that prices models (usd) the hold
// and the round checks must cover the dearer of the two models.
func TestReserveMaxFallbackPrice(t *testing.T) {
	ag := agent.DefaultAgent()
	ag.Model, ag.FallbackModel = "claude-haiku-4-5", "claude-opus-4-1" // $1/$5 and $15/$75
	ag.Reserve, ag.MaxTokens = agent.ReserveMax, 100
	ag.Limits = agent.Limits{MaxRounds: 1}
	agents := func(string) (*agent.Agent, bool) { return ag, true }
	h := harnessOver(t, tools.Builtins(), agents)
	h.runner = h.newRunner(tools.Builtins(), agents, func(c *agent.Config) { c.BudgetUnit = coachd.UnitMicroUSD })
	h.fake.Enqueue(anthropictest.Status(529, http.Header{}, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
		anthropictest.Text("Noted.", 1))
	res := h.turn(agent.TurnRequest{Message: strings.Repeat("Here is my training log for the week. ", 400)}, &sink{})
	if res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("stop %s %v", res.StopReason, res.Err)
	}
	if reqs := h.fake.Requests(); len(reqs) != 2 || reqs[1].Model != "claude-opus-4-1" {
		t.Fatalf("the fallback did not serve the round: %d requests", len(reqs))
	}
	r := h.firstReservation()
	if r.Charged > r.Estimate {
		t.Fatalf("charged %d of a %d hold (reserve: max must never overspend, fallback included)", r.Charged, r.Estimate)
	}
}

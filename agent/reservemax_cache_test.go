package agent_test

import (
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/tools"
)

// TestReserveMaxCacheWrite: under reserve: max a turn never spends more
// than it held in a budget unit that prices cache writes above plain
// input (weighted, usd): the first request of a session writes the
// prompt cache, at 1.25 times an input token.
func TestReserveMaxCacheWrite(t *testing.T) {
	for _, unit := range []coachd.BudgetUnit{coachd.UnitWeighted, coachd.UnitMicroUSD} {
		t.Run(string(unit), func(t *testing.T) {
			ag := agent.DefaultAgent()
			ag.Reserve, ag.MaxTokens = agent.ReserveMax, 100
			ag.Limits = agent.Limits{MaxRounds: 1}
			agents := func(string) (*agent.Agent, bool) { return ag, true }
			h := harnessOver(t, tools.Builtins(), agents)
			h.runner = h.newRunner(tools.Builtins(), agents, func(c *agent.Config) { c.BudgetUnit = unit })
			h.fake.Enqueue(anthropictest.Text("Noted.", 1))
			res := h.turn(agent.TurnRequest{Message: strings.Repeat("Here is my training log for the week. ", 400)}, &sink{})
			if res.StopReason != coachd.TurnEndTurn {
				t.Fatalf("stop %s %v", res.StopReason, res.Err)
			}
			if u := h.fake.Requests()[0].Usage; u.CacheCreationInputTokens == 0 {
				t.Fatalf("the request wrote no cache: %+v", u)
			}
			r := h.firstReservation()
			if r.Charged > r.Estimate {
				t.Fatalf("charged %d of a %d hold (reserve: max must never overspend)", r.Charged, r.Estimate)
			}
		})
	}
}

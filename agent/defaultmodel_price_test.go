package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/tools"
)

// TestDefaultModelPrice: an agent that names no model is served by the
// server's --model (here Opus 4.1, $15/$75). In a budget of money its
// hold, its rounds' checks and an external loop's record are priced at
// that model, as its rounds are charged: reserve: max never overspends,
// and tokens_used costs Opus's input price, not Sonnet's.
func TestDefaultModelPrice(t *testing.T) {
	ctx := context.Background()
	ag := agent.DefaultAgent()
	ag.Model = ""
	ag.Reserve, ag.MaxTokens = agent.ReserveMax, 100
	ag.Limits = agent.Limits{MaxRounds: 1}
	agents := func(string) (*agent.Agent, bool) { return ag, true }
	h := harnessOver(t, tools.Builtins(), agents)
	h.runner = h.newRunner(tools.Builtins(), agents, func(c *agent.Config) {
		c.BudgetUnit = coachd.UnitMicroUSD
		c.Model = anthropic.New(anthropic.Config{APIKey: "test", BaseURL: h.fake.URL(), MaxRetries: -1, Untraced: true, Model: "claude-opus-4-1"})
		c.DefaultModel = "claude-opus-4-1"
	})
	h.fake.Enqueue(anthropictest.Text("Noted.", 1))
	res := h.turn(agent.TurnRequest{Message: strings.Repeat("Here is my training log for the week. ", 400)}, &sink{})
	if res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("stop %s %v", res.StopReason, res.Err)
	}
	if reqs := h.fake.Requests(); len(reqs) != 1 || reqs[0].Model != "claude-opus-4-1" {
		t.Fatalf("requests %d, want one to the server's model", len(reqs))
	}
	r := h.firstReservation()
	if r.Charged > r.Estimate {
		t.Fatalf("charged %d of a %d hold (reserve: max must never overspend at the server's model)", r.Charged, r.Estimate)
	}
	sp, err := h.runner.RecordSpend(ctx, h.user.ID, r.ID, 1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := coachd.UnitMicroUSD.Charge("claude-opus-4-1", coachd.Usage{InputTokens: 1000}); sp.Amount != want {
		t.Fatalf("record of 1000 tokens priced %d µ$, want %d (Opus's input price)", sp.Amount, want)
	}
}

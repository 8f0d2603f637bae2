package agent_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/tools"
)

// TestUSDTurnNotCappedAt100: in a budget of money, a turn is bounded by
// what MaxTurnTokens can cost, not by MaxTurnTokens read as micro-dollars
// ($100). A long turn on Opus 4.1 (40 rounds of a 180k-token context, no
// cache) costs $120 and is charged $120; an external loop's record of
// such a turn too; and a forged record (every count at its maximum) is
// charged no more than MaxTurnTokens of the dearest token, the ledger
// balanced.
func TestUSDTurnNotCappedAt100(t *testing.T) {
	ctx := context.Background()
	ag := agent.DefaultAgent()
	ag.Model = "claude-opus-4-1"
	ag.Tools = append(ag.Tools, "echo")
	ag.Limits = agent.Limits{MaxRounds: 40, MaxToolCalls: 40}
	agents := func(string) (*agent.Agent, bool) { return ag, true }
	h := harnessOver(t, append(tools.Builtins(), echoTool), agents)
	h.runner = h.newRunner(append(tools.Builtins(), echoTool), agents, func(c *agent.Config) {
		c.BudgetUnit = coachd.UnitMicroUSD
		c.Model = anthropic.New(anthropic.Config{APIKey: "test", BaseURL: h.fake.URL(), MaxRetries: -1, Untraced: true, NoCache: true})
	})
	h.store.SetBudgetConfig(coachd.BudgetConfig{Unit: coachd.UnitMicroUSD}) // as coachd serve --budget-unit usd
	budget := int64(100_000_000_000)                                        // $100,000
	if _, err := h.store.UpdateUser(ctx, h.user.ID, coachd.UserUpdate{TokenBudget: &budget}); err != nil {
		t.Fatal(err)
	}
	round := coachd.Usage{InputTokens: 180_000, OutputTokens: 4_000} // $2.70 + $0.30
	for i := range 39 {
		h.fake.Enqueue(anthropictest.Blocks(use(fmt.Sprintf("toolu_%02d", i), "echo", `{}`)).WithUsage(round))
	}
	h.fake.Enqueue(anthropictest.Text("Done.", 5).WithUsage(round))
	res := h.turn(agent.TurnRequest{Message: "go through my whole season"}, &sink{})
	if res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("stop %s %v", res.StopReason, res.Err)
	}
	const want = 120_000_000 // µ$: 40 rounds of $3.00
	if r := h.firstReservation(); r.Charged != want {
		t.Fatalf("turn charged %d µ$, want %d ($120)", r.Charged, want)
	}

	// An external loop's turn of the same cost, reported as its usage.
	pf, err := h.runner.Preflight(ctx, agent.PreflightRequest{User: h.user, Message: "and the one before"})
	if err != nil {
		t.Fatal(err)
	}
	sp, err := h.runner.RecordSpend(ctx, h.user.ID, pf.ReservationID, 0, &coachd.Usage{InputTokens: 40 * 180_000, OutputTokens: 40 * 4_000})
	if err != nil {
		t.Fatal(err)
	}
	if sp.Amount != want {
		t.Fatalf("record priced %d µ$, want %d", sp.Amount, want)
	}
	rec, err := h.store.Record(ctx, h.user.ID, coachd.TurnRecord{SessionID: pf.SessionID, ReservationID: pf.ReservationID,
		Final: true, TokensUsed: sp.Tokens, Amount: sp.Amount, IdempotencyKey: "k1", RequestHash: "h1"})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Charged != want {
		t.Fatalf("record charged %d µ$, want %d", rec.Charged, want)
	}

	// A forged record: every count at the most the API takes.
	pf, err = h.runner.Preflight(ctx, agent.PreflightRequest{User: h.user, Message: "and the one before that"})
	if err != nil {
		t.Fatal(err)
	}
	m := coachd.MaxTurnTokens
	sp, err = h.runner.RecordSpend(ctx, h.user.ID, pf.ReservationID, 0, &coachd.Usage{InputTokens: m, OutputTokens: m,
		CacheReadInputTokens: m, CacheCreationInputTokens: m, CacheCreation1hInputTokens: m, WebSearchRequests: m})
	if err != nil {
		t.Fatal(err)
	}
	maxTurn := m * 75 // µ$: MaxTurnTokens of Opus 4.1's output, the dearest token ($75 a million)
	if sp.Amount != maxTurn {
		t.Fatalf("forged record priced %d µ$, want the cap %d", sp.Amount, maxTurn)
	}
	rec, err = h.store.Record(ctx, h.user.ID, coachd.TurnRecord{SessionID: pf.SessionID, ReservationID: pf.ReservationID,
		Final: true, TokensUsed: sp.Tokens, Amount: sp.Amount, IdempotencyKey: "k2", RequestHash: "h2"})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Charged != maxTurn {
		t.Fatalf("forged record charged %d µ$, want the cap %d", rec.Charged, maxTurn)
	}
	if drift, err := h.store.CheckLedger(ctx); err != nil || len(drift) > 0 {
		t.Fatalf("ledger drift %+v %v", drift, err)
	}
}

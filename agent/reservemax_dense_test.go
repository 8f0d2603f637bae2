package agent_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/tools"
)

// TestReserveMaxDenseFirstRound: under reserve: max no check runs before
// a turn's first round (roundBudget checks the rounds after it), so its
// hold must cover what that round can cost. Without count_tokens the
// input is estimated from size, a token per 4 bytes, and text the
// tokenizer splits finer (CJK: 3 bytes a character, about a token each)
// bills more than that: with one round the settle charged past the hold,
// and a budget that held exactly it was overspent. A tokenizer's token
// is at least a byte, so the hold covers the first round at a token a byte.
func TestReserveMaxDenseFirstRound(t *testing.T) {
	ag := agent.DefaultAgent()
	ag.Reserve, ag.MaxTokens = agent.ReserveMax, 100
	ag.Limits = agent.Limits{MaxRounds: 1}
	agents := func(string) (*agent.Agent, bool) { return ag, true }
	h := harnessOver(t, tools.Builtins(), agents)
	msg := strings.Repeat("我每天早上开车去机场接客人。", 150)
	// What the API bills for it: a token a character, and the prompt.
	in := int64(utf8.RuneCountInString(msg)) + 1000
	h.fake.Enqueue(anthropictest.Text("好的。", 1).WithUsage(coachd.Usage{InputTokens: in, OutputTokens: 5}))
	res := h.turn(agent.TurnRequest{Message: msg}, &sink{})
	if res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("stop %s %v", res.StopReason, res.Err)
	}
	r := h.mustSettled(res, coachd.ReservationFinalized)
	if r.Charged != in+5 {
		t.Fatalf("charged %d, want the billed %d", r.Charged, in+5)
	}
	if r.Charged > r.Estimate {
		t.Fatalf("charged %d of a %d hold: reserve: max overspent on its first round", r.Charged, r.Estimate)
	}
}

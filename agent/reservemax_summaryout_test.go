package agent_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestReserveMaxSummaryOutput: under reserve: max the round after a
// compaction sends the summary instead of the turns it covers, and the
// summary is the summary call's output: up to its max_tokens, which may
// be more than those turns (a short first turn before a long one). The
// check priced that round on the history before the summary, so a long
// summary of a short turn made the turn spend past its hold.
func TestReserveMaxSummaryOutput(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	ag := &agent.Agent{Name: "long", Prompt: "Be brief.", MaxTokens: 100}
	agents := func(string) (*agent.Agent, bool) { return ag, true }
	h.runner = h.newRunner(nil, agents, func(c *agent.Config) { c.CountTokens = true })
	h.fake.SetCounter(func(r *anthropictest.Request) int64 { return denseTokens(r.Raw) })
	h.fake.SetScript(func(r *anthropictest.Request) anthropictest.Reply {
		out := "Hello."
		if tc, _ := r.Body["tool_choice"].(map[string]any); tc["type"] == "none" {
			out = strings.Repeat("摘", 1000) // a summary of 1,000 tokens
		}
		return anthropictest.Text(out, 50).WithUsage(coachd.Usage{
			InputTokens: denseTokens(r.Raw), OutputTokens: int64(utf8.RuneCountInString(out))})
	})
	res := h.turn(agent.TurnRequest{Message: "hi"}, &sink{})
	if res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("stop %s %v", res.StopReason, res.Err)
	}
	ag.Reserve, ag.Limits = agent.ReserveMax, agent.Limits{MaxRounds: 2}
	ag.Compaction = &agent.Compaction{SummarizeAfter: 500, KeepTurns: 1}
	res = h.turn(agent.TurnRequest{SessionID: res.SessionID, Message: strings.Repeat("Here is my week of training. ", 200)}, &sink{})
	if res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("stop %s %v", res.StopReason, res.Err)
	}
	r := h.lastReservation()
	if r.Charged > r.Estimate {
		t.Fatalf("charged %d of a %d hold: the round after the summary overspent reserve: max", r.Charged, r.Estimate)
	}
}

package agent_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// denseTokens bills raw as a tokenizer does CJK: a token a character, and
// ASCII (the JSON around it, English) at 4 bytes a token.
func denseTokens(raw []byte) int64 {
	ascii, other := 0, int64(0)
	for _, r := range string(raw) {
		if r < utf8.RuneSelf {
			ascii++
		} else {
			other++
		}
	}
	return other + int64(ascii+3)/4
}

// TestReserveMaxDenseSummary: under reserve: max the compaction call is
// spent from the turn's hold before its first round, which nothing checks
// after it. With count_tokens the hold is the first round's real input;
// the summary call and that round were priced at size / 4, which CJK
// bills past (a token a character, 3 bytes): the summary fit on paper,
// and the turn was charged past its hold (and a budget that held exactly
// it). The check prices them as the hold prices a first round.
func TestReserveMaxDenseSummary(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	ag := &agent.Agent{Name: "dense", Prompt: "Be brief.", MaxTokens: 100}
	agents := func(string) (*agent.Agent, bool) { return ag, true }
	h.runner = h.newRunner(nil, agents, func(c *agent.Config) { c.CountTokens = true })
	h.fake.SetScript(func(r *anthropictest.Request) anthropictest.Reply {
		out := "好的。"
		if tc, _ := r.Body["tool_choice"].(map[string]any); tc["type"] == "none" {
			out = "摘要：" + strings.Repeat("用户每天早上开车去机场。", 25)
		}
		return anthropictest.Text(out, 50).WithUsage(coachd.Usage{
			InputTokens: denseTokens(r.Raw), OutputTokens: int64(utf8.RuneCountInString(out))})
	})
	old := strings.Repeat("我每天早上开车去机场接客人。", 70) // about 1,000 characters
	res := h.turn(agent.TurnRequest{Message: old}, &sink{})
	if res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("stop %s %v", res.StopReason, res.Err)
	}

	ag.Reserve, ag.Limits = agent.ReserveMax, agent.Limits{MaxRounds: 1}
	ag.Compaction = &agent.Compaction{SummarizeAfter: 500, KeepTurns: 1}
	msg := strings.Repeat("今天的训练计划是什么？请详细说明。", 540) // about 9,000 characters
	// count_tokens answers at least what the first request bills: the
	// hold covers that round, whatever else the turn spends.
	h.fake.SetCount(int64(utf8.RuneCountInString(old+msg)) + 100)
	res = h.turn(agent.TurnRequest{SessionID: res.SessionID, Message: msg}, &sink{})
	if res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("stop %s %v", res.StopReason, res.Err)
	}
	r := h.lastReservation()
	if r.Charged > r.Estimate {
		t.Fatalf("charged %d of a %d hold: the summary call overspent reserve: max", r.Charged, r.Estimate)
	}
}

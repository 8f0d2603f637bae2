package agent_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestReserveMaxCompaction: under reserve: max a turn never spends more
// than it held, even when the session is long enough to be compacted
// first: the summary call is spent from the same hold, which was priced
// for the turn's rounds alone.
func TestReserveMaxCompaction(t *testing.T) {
	h := newHarness(t, agent.Limits{MaxRounds: 1})
	h.agent.MaxTokens = 200
	var sid string
	for i := range 4 {
		h.fake.Enqueue(anthropictest.Text(fmt.Sprintf("Reply %d: %s", i, strings.Repeat("noted ", 40)), 5))
		res := h.turn(agent.TurnRequest{SessionID: sid, Message: fmt.Sprintf("Turn %d: %s", i, strings.Repeat("tell me more ", 60))}, &sink{})
		if res.StopReason != coachd.TurnEndTurn {
			t.Fatalf("turn %d: stop %s %v", i, res.StopReason, res.Err)
		}
		sid = res.SessionID
	}
	h.agent.Reserve = agent.ReserveMax
	h.agent.Compaction = &agent.Compaction{SummarizeAfter: 500, KeepTurns: 1}
	h.fake.SetScript(func(r *anthropictest.Request) anthropictest.Reply {
		if tc, _ := r.Body["tool_choice"].(map[string]any); tc["type"] == "none" {
			return anthropictest.Text("Summary: "+strings.Repeat("the user asked ", 20), 5)
		}
		return anthropictest.Text("Done.", 1)
	})
	res := h.turn(agent.TurnRequest{SessionID: sid, Message: "and now?"}, &sink{})
	if res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("stop %s %v", res.StopReason, res.Err)
	}
	r := h.lastReservation()
	if r.Charged > r.Estimate {
		t.Fatalf("stop %s: charged %d of a %d hold (reserve: max must never overspend)", res.StopReason, r.Charged, r.Estimate)
	}
}

package agent_test

import (
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestUpstreamBreaksDuringToolInput: the upstream broke its stream (an
// error event, a cut connection) while the model was writing a tool
// call's input. The client had shown the call's card (tool_call_started,
// then its cut tool_result), but the stored reply kept only the text: a
// reload lost the card, unlike a turn stopped at the same point. The
// call is stored with an "interrupted" result, as a stopped one is, so
// history stays valid, the next turn's request is one the API accepts,
// and Retry runs the turn again without the broken reply.
func TestUpstreamBreaksDuringToolInput(t *testing.T) {
	input := `{"text":"a long input the model is still writing"}`
	reply := anthropictest.Blocks(anthropictest.TextBlock("Let me check.", 4), anthropictest.ToolUse("toolu_cut", "echo", input, 8, 16, 24))
	for name, broken := range map[string]anthropictest.Reply{
		"ErrorEvent": reply.ErrorAfter(9, "api_error", "Internal server error"),
		"Overloaded": reply.ErrorAfter(9, "overloaded_error", "Overloaded"),
		"Cut":        reply.DropAfter(9),
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, agent.Limits{})
			h.fake.Enqueue(broken)
			s := &sink{}
			res := h.turn(agent.TurnRequest{Message: "check this"}, s)
			if res.StopReason != coachd.TurnError {
				t.Fatalf("stop %s err %v, want an error", res.StopReason, res.Err)
			}
			if got := s.of(coachd.EventToolCallStarted); len(got) != 1 || got[0].ToolUseID != "toolu_cut" {
				t.Fatalf("tool_call_started events %+v, want toolu_cut's: the client showed its card", got)
			}
			msgs := h.history(res.SessionID)
			if len(msgs) != 3 {
				t.Fatalf("stored %d messages (%s), want 3 (the message, the broken reply with its call, the call's result)", len(msgs), asJSON(t, msgs))
			}
			if r := msgs[1]; !r.Partial || !strings.HasPrefix("Let me check.", r.Content) || r.Content == "" {
				t.Errorf("stored reply partial=%v content %q, want the partial text", r.Partial, r.Content)
			}
			var call *coachd.Block
			for i, b := range msgs[1].Blocks {
				if b.Type == coachd.BlockToolUse {
					call = &msgs[1].Blocks[i]
				}
			}
			if call == nil || call.ID != "toolu_cut" || call.Name != "echo" || !strings.HasPrefix(string(call.Input), "{") {
				t.Fatalf("stored reply blocks %s, want the call toolu_cut kept with an object input", asJSON(t, msgs[1].Blocks))
			}
			results := msgs[2].Blocks
			if msgs[2].Role != coachd.RoleUser || len(results) != 1 || results[0].ToolUseID != "toolu_cut" || !results[0].IsError ||
				results[0].ResultText() != agent.InterruptedText {
				t.Fatalf("stored results %s, want toolu_cut answered interrupted", asJSON(t, results))
			}
			h.assertValidHistory(res.SessionID)

			// Retry runs the turn again: the model sees neither the broken
			// text nor its call, and the message is stored once.
			h.fake.Enqueue(anthropictest.Text("Checked.", 4))
			if res2 := h.turn(agent.TurnRequest{SessionID: res.SessionID, Retry: true, RetryPartial: true}, &sink{}); res2.StopReason != coachd.TurnEndTurn {
				t.Fatalf("retry: %s %v", res2.StopReason, res2.Err)
			}
			reqs := h.fake.Requests()
			if got := asJSON(t, reqs[len(reqs)-1].Messages()); strings.Contains(got, "toolu_cut") || strings.Contains(got, "Let me") {
				t.Fatalf("the retried turn sent %s, want the broken reply left out", got)
			}

			// A turn after it sends a valid history (the fake refuses an
			// unanswered tool_use, as the API does).
			h.fake.Enqueue(anthropictest.Text("ok", 4))
			if res3 := h.turn(agent.TurnRequest{SessionID: res.SessionID, Message: "thanks"}, &sink{}); res3.StopReason != coachd.TurnEndTurn {
				t.Fatalf("next turn: %s %v", res3.StopReason, res3.Err)
			}
			said := 0
			for _, m := range h.history(res.SessionID) {
				if m.Role == coachd.RoleUser && m.Content == "check this" {
					said++
				}
			}
			if said != 1 {
				t.Errorf("the message is stored %d times, want once", said)
			}
		})
	}
}

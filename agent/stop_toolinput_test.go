package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// leaveAt is a client that goes away (the turn is stopped) when it is
// sent an event of type at.
type leaveAt struct {
	mu     sync.Mutex
	at     coachd.EventType
	events []coachd.Event
}

func (s *leaveAt) Send(ev coachd.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, ev)
	if ev.Type == s.at {
		return errors.New("stopped")
	}
	return nil
}

// stopInToolInput runs a turn stopped while the model is still writing
// its tool call's input, and returns its result.
func stopInToolInput(t *testing.T, h *harness) *agent.Result {
	t.Helper()
	input := `{"text":"a long input the model is still writing"}`
	h.fake.Enqueue(anthropictest.Blocks(anthropictest.TextBlock("Let me check.", 4), anthropictest.ToolUse("toolu_cut", "echo", input, 8, 16, 24)).StallAfter(9))
	tr, err := h.runner.Prepare(context.Background(), agent.TurnRequest{User: h.user, Message: "check this"})
	if err != nil {
		t.Fatal(err)
	}
	res := tr.Run(context.Background(), &leaveAt{at: coachd.EventToolCallStarted})
	if res.StopReason != coachd.TurnAborted {
		t.Fatalf("stop %s err %v", res.StopReason, res.Err)
	}
	return res
}

// TestStopDuringToolInput: a turn stopped while a tool call's input was
// still streaming kept the reply's text and dropped the call its client
// had shown (tool_call_started): after a reload the call was gone. The
// call is stored with an "interrupted" result, as one cut by max_tokens
// is, so history stays valid and the next turn's request is accepted.
func TestStopDuringToolInput(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	res := stopInToolInput(t, h)
	msgs := h.history(res.SessionID)
	if len(msgs) != 3 {
		t.Fatalf("stored %d messages, want 3 (the message, the stopped reply with its call, the call's result)", len(msgs))
	}
	reply := msgs[1]
	if !reply.Partial || !strings.HasPrefix("Let me check.", reply.Content) || reply.Content == "" {
		t.Errorf("stored reply partial=%v content %q, want the partial text", reply.Partial, reply.Content)
	}
	var call *coachd.Block
	for i, b := range reply.Blocks {
		if b.Type == coachd.BlockToolUse {
			call = &reply.Blocks[i]
		}
	}
	if call == nil || call.ID != "toolu_cut" || call.Name != "echo" {
		t.Fatalf("stored reply blocks %+v, want the call toolu_cut kept", reply.Blocks)
	}
	results := msgs[2].Blocks
	if msgs[2].Role != coachd.RoleUser || len(results) != 1 || results[0].ToolUseID != "toolu_cut" || !results[0].IsError ||
		results[0].ResultText() != agent.InterruptedText {
		t.Fatalf("stored results %+v, want toolu_cut answered interrupted", results)
	}
	h.assertValidHistory(res.SessionID)

	// The next turn's request is one the API accepts (the fake checks
	// every tool_use is answered) and carries the call, answered.
	h.fake.Enqueue(anthropictest.Text("ok", 4))
	if res2 := h.turn(agent.TurnRequest{SessionID: res.SessionID, Message: "go on"}, &sink{}); res2.StopReason != coachd.TurnEndTurn {
		t.Fatalf("next turn: %s %v", res2.StopReason, res2.Err)
	}
	reqs := h.fake.Requests()
	sent := reqs[len(reqs)-1].Messages()
	if len(sent) != 3 || !strings.Contains(asJSON(t, sent[1]), "toolu_cut") || !strings.Contains(asJSON(t, sent[2]), "toolu_cut") {
		t.Fatalf("next turn sent %s", asJSON(t, sent))
	}
}

// TestStopDuringToolInputResent: the same message sent again after such a
// stop (a client with no retry) runs the turn again, as after a stopped
// reply with no call: the model sees neither the broken text nor its call.
func TestStopDuringToolInputResent(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	res := stopInToolInput(t, h)
	h.fake.Enqueue(anthropictest.Text("Checked.", 4))
	res2 := h.turn(agent.TurnRequest{SessionID: res.SessionID, Message: "check this", Resent: true}, &sink{})
	if res2.StopReason != coachd.TurnEndTurn {
		t.Fatalf("resent: %s %v", res2.StopReason, res2.Err)
	}
	reqs := h.fake.Requests()
	sent := reqs[len(reqs)-1].Messages()
	if got := asJSON(t, sent); len(sent) != 1 || strings.Contains(got, "toolu_cut") || strings.Contains(got, "Let me") {
		t.Fatalf("the resent turn sent %s, want the user's message alone", got)
	}
	said := 0
	for _, m := range h.history(res.SessionID) {
		if m.Role == coachd.RoleUser && m.Content == "check this" {
			said++
		}
	}
	if said != 1 {
		t.Fatalf("the message is stored %d times, want once", said)
	}
	// And the turn after it still sends a valid history without them.
	h.fake.Enqueue(anthropictest.Text("ok", 4))
	if res3 := h.turn(agent.TurnRequest{SessionID: res.SessionID, Message: "thanks"}, &sink{}); res3.StopReason != coachd.TurnEndTurn {
		t.Fatalf("next turn: %s %v", res3.StopReason, res3.Err)
	}
	reqs = h.fake.Requests()
	if got := asJSON(t, reqs[len(reqs)-1].Messages()); strings.Contains(got, "toolu_cut") || strings.Contains(got, "Let me") {
		t.Fatalf("the turn after sent %s, want the stopped reply left out", got)
	}
}

func asJSON(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

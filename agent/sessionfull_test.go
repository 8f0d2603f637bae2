package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// nearFull runs a first turn, then sets its session's message count to n
// as if it held that many messages.
func nearFull(t *testing.T, h *harness, n int) *agent.Result {
	t.Helper()
	h.fake.Enqueue(anthropictest.Text("Hello.", 2))
	first := h.turn(agent.TurnRequest{Message: "hi"}, &sink{})
	if first.Err != nil {
		t.Fatalf("first turn: %v", first.Err)
	}
	if _, err := h.store.SQL().ExecContext(context.Background(), `UPDATE sessions SET message_count = ? WHERE id = ?`, n, first.SessionID); err != nil {
		t.Fatal(err)
	}
	return first
}

// toolChoice is the tool_choice type a request sent, "" for none.
func toolChoice(r anthropictest.Request) string {
	tc, _ := r.Body["tool_choice"].(map[string]any)
	s, _ := tc["type"].(string)
	return s
}

// TestSessionFullToolRounds: a turn admitted near the session's message
// cap runs tool rounds only while a round and the reply after it fit;
// the round that would not leave room is offered no tools, so the model
// answers in text and every round the model was paid for is stored. The
// turn says the session is full (stop reason session_full).
func TestSessionFullToolRounds(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	// The user message makes 4997; a tool round 4999; one more round fits.
	first := nearFull(t, h, coachd.MaxMessagesPerSession-4)
	n := 0
	h.fake.SetScript(func(r *anthropictest.Request) anthropictest.Reply {
		if strings.Contains(string(r.Raw), `"tool_choice":{"type":"none"`) {
			return anthropictest.Text("Here is what I found.", 5)
		}
		n++
		return anthropictest.Blocks(anthropictest.TextBlock("Checking.", 2), use("e"+string(rune('0'+n)), "echo", `{}`))
	})
	s := &sink{}
	res := h.turn(agent.TurnRequest{SessionID: first.SessionID, Message: "go"}, s)
	if res.Err != nil || res.StopReason != coachd.TurnSessionFull {
		t.Fatalf("stop %q, err %v; want %q and no error", res.StopReason, res.Err, coachd.TurnSessionFull)
	}
	reqs := h.fake.Requests()[1:]
	if len(reqs) != 2 || toolChoice(reqs[0]) != "" || toolChoice(reqs[1]) != "none" {
		t.Fatalf("%d requests; want a tool round, then one offered no tools", len(reqs))
	}
	if !strings.Contains(res.Text, "Here is what I found.") {
		t.Fatalf("reply %q", res.Text)
	}
	h.assertValidHistory(first.SessionID)
	msgs := h.history(first.SessionID)
	// hi, Hello. | go, tool round (2), the reply: every call's reply stored.
	if len(msgs) != 2+4 || msgs[5].Role != coachd.RoleAssistant || msgs[5].Content != "Here is what I found." {
		t.Fatalf("stored %d messages", len(msgs))
	}
	sess, err := h.store.FindSession(context.Background(), h.user.ID, first.SessionID)
	if err != nil || sess.MessageCount != coachd.MaxMessagesPerSession {
		t.Fatalf("session %+v (%v)", sess, err)
	}
	bs, err := h.store.BudgetStatus(context.Background(), h.user.ID)
	if err != nil || bs.TokensReserved != 0 || bs.TokensUsed != first.Billed+res.Billed {
		t.Fatalf("budget %+v (%v), want %d used and nothing held", bs, err, first.Billed+res.Billed)
	}
	ended := s.of(coachd.EventTurnEnded)
	if len(ended) != 1 || ended[0].StopReason != coachd.TurnSessionFull || len(s.of(coachd.EventError)) != 0 {
		t.Fatalf("turn_ended %+v, errors %+v", ended, s.of(coachd.EventError))
	}
}

// TestSessionFullAnswer: an answer to a paused call that fills the
// session leaves no room for a reply: the turn stops before the model
// call (nothing spent, nothing charged), saying the session is full.
func TestSessionFullAnswer(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	res, _ := pause(t, h)
	if _, err := h.store.SQL().ExecContext(context.Background(), `UPDATE sessions SET message_count = ? WHERE id = ?`, coachd.MaxMessagesPerSession-1, res.SessionID); err != nil {
		t.Fatal(err)
	}
	before, err := h.store.BudgetStatus(context.Background(), h.user.ID)
	if err != nil {
		t.Fatal(err)
	}
	h.fake.Enqueue(anthropictest.Text("Airport it is.", 5))
	s := &sink{}
	res2 := h.turn(agent.TurnRequest{SessionID: res.SessionID, Answer: &agent.Answer{ToolUseID: "o1", Content: json.RawMessage(`"Airport"`)}}, s)
	if res2.Err == nil || res2.Err.Code != coachd.ECONFLICT || !strings.Contains(res2.Err.Message, "session is full") {
		t.Fatalf("stop %q, err %v; want the session full", res2.StopReason, res2.Err)
	}
	if n := len(h.fake.Requests()); n != 1 {
		t.Fatalf("%d model requests: the reply that could not be stored was asked for", n)
	}
	h.assertValidHistory(res.SessionID)
	after, err := h.store.BudgetStatus(context.Background(), h.user.ID)
	if err != nil || after.TokensReserved != 0 || after.TokensUsed != before.TokensUsed {
		t.Fatalf("budget %+v (%v), want %d used and nothing held", after, err, before.TokensUsed)
	}
}

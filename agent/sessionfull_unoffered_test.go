package agent_test

import (
	"context"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestSessionFullUnofferedCall: the round a full session leaves no room
// for tools is offered none, but a model may call one anyway. The calls
// are not run, and the turn ends saying the session is full, with the
// reply's text stored and a history the API takes. With room for one
// message only, the reply and its calls' "not run" results (two
// messages) were refused together by the store: the turn failed with an
// error and the reply the user saw streamed was lost. Its calls are left
// out of the stored reply then, as they were never run.
func TestSessionFullUnofferedCall(t *testing.T) {
	for name, tc := range map[string]struct {
		room   int   // messages left after the user message
		stored []int // blocks of each message the turn stores
	}{
		"OneLeft":  {1, []int{1, 1}},    // the message; the reply, text alone
		"TwoLeft":  {2, []int{1, 2, 1}}, // the message; the reply with its call; its result
		"CallOnly": {1, []int{1}},       // a reply of a call alone: nothing to store
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, agent.Limits{})
			first := nearFull(t, h, coachd.MaxMessagesPerSession-1-tc.room)
			blocks := []anthropictest.BlockSpec{anthropictest.TextBlock("Let me check.", 3), use("u1", "echo", `{}`)}
			if name == "CallOnly" {
				blocks = blocks[1:]
			}
			h.fake.Enqueue(anthropictest.Blocks(blocks...).WithUsage(usage(40, 10)))
			s := &sink{}
			res := h.turn(agent.TurnRequest{SessionID: first.SessionID, Message: "go"}, s)
			if res.Err != nil || res.StopReason != coachd.TurnSessionFull {
				t.Fatalf("stop %q, err %v; want %q and no error", res.StopReason, res.Err, coachd.TurnSessionFull)
			}
			if reqs := h.fake.Requests(); len(reqs) != 2 || toolChoice(reqs[1]) != "none" {
				t.Fatalf("%d requests; want one turn's round offered no tools", len(reqs))
			}
			h.assertValidHistory(first.SessionID)
			msgs := h.history(first.SessionID)[2:]
			var got []int
			for _, m := range msgs {
				got = append(got, len(m.Blocks))
			}
			if len(got) != len(tc.stored) || (len(got) > 1 && msgs[1].Content != "Let me check.") {
				t.Fatalf("stored %v (%+v), want %v", got, msgs, tc.stored)
			}
			for i := range got {
				if got[i] != tc.stored[i] {
					t.Fatalf("stored blocks %v, want %v", got, tc.stored)
				}
			}
			if rs := s.of(coachd.EventToolResult); len(rs) != 1 || !rs[0].IsError {
				t.Errorf("tool results %+v: the call the client saw start gets its end", rs)
			}
			bs, err := h.store.BudgetStatus(context.Background(), h.user.ID)
			if err != nil || bs.TokensReserved != 0 || bs.TokensUsed != first.Billed+res.Billed || res.Billed != 50 {
				t.Fatalf("budget %+v (%v), want %d used (the round's 50 too) and nothing held", bs, err, first.Billed+res.Billed)
			}
			sess, err := h.store.FindSession(context.Background(), h.user.ID, first.SessionID)
			if err != nil || sess.MessageCount != int64(coachd.MaxMessagesPerSession-tc.room+len(tc.stored)-1) {
				t.Fatalf("session %+v (%v)", sess, err)
			}
		})
	}
}

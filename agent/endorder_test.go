package agent_test

import (
	"context"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// endSink checks, the moment a turn's turn_ended is sent, what a client
// that reads it and sends its next message at once relies on: the turn's
// reply is stored, nothing of its reservation is held, and the session is
// free, for this process (its slot) and for another replica (its lease),
// without on_busy=wait.
type endSink struct {
	sink
	h       *harness
	replica *agent.Runner
	checked bool
}

func (s *endSink) Send(ev coachd.Event) error {
	if ev.Type == coachd.EventTurnEnded {
		s.check(ev)
	}
	return s.sink.Send(ev)
}

func (s *endSink) check(ev coachd.Event) {
	t, ctx := s.h.t, context.Background()
	s.checked = true
	msgs := s.h.history(ev.SessionID)
	if ev.StopReason == coachd.TurnEndTurn && (len(msgs) < 2 || msgs[len(msgs)-1].Role != coachd.RoleAssistant) {
		t.Errorf("at turn_ended: %d messages stored, the reply not last", len(msgs))
	}
	st, err := s.h.store.BudgetStatus(ctx, s.h.user.ID)
	if err != nil || st.TokensReserved != 0 {
		t.Errorf("at turn_ended: %d tokens still held (%v)", st.TokensReserved, err)
	}
	for name, r := range map[string]*agent.Runner{"this process": s.h.runner, "another replica": s.replica} {
		next, err := r.Prepare(ctx, agent.TurnRequest{User: s.h.user, SessionID: ev.SessionID, Message: "next"})
		if err != nil {
			t.Errorf("at turn_ended, the next turn in %s: %v", name, err)
			continue
		}
		next.Close()
	}
}

// A turn frees its session, stores its reply and settles its reservation
// before it sends turn_ended, however it ends: a client that sends its
// next message the moment it reads the end is never told the session is
// busy (the server's dialects all end a turn's stream on turn_ended or
// after it).
func TestTurnEndedAfterRelease(t *testing.T) {
	cases := []struct {
		name    string
		replies []anthropictest.Reply
		endFail bool // EndTurn fails: the reply is stored and settled apart
		stop    string
	}{
		{"plain", []anthropictest.Reply{anthropictest.Text("Hello there.", 4)}, false, coachd.TurnEndTurn},
		{"tool round", []anthropictest.Reply{
			anthropictest.Blocks(anthropictest.TextBlock("Checking.", 4), use("t1", "echo", `{"a":1}`)),
			anthropictest.Text("Done.", 2),
		}, false, coachd.TurnEndTurn},
		{"end written apart", []anthropictest.Reply{anthropictest.Text("Hello there.", 4)}, true, coachd.TurnEndTurn},
		{"model error", []anthropictest.Reply{anthropictest.Status(400, nil,
			`{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}`)}, false, coachd.TurnError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, agent.Limits{})
			r := h.runner
			if tc.endFail {
				r = h.newRunner(nil, nil, func(c *agent.Config) { c.Store = &failingEnd{Store: h.store, appends: -1} })
			}
			s := &endSink{h: h, replica: h.newRunner(nil, nil, nil)}
			for turn := range 2 { // a new session, then a turn on it
				h.fake.Enqueue(tc.replies...)
				req := agent.TurnRequest{User: h.user, Message: "hello"}
				if turn > 0 {
					req.SessionID = s.sink.of(coachd.EventTurnEnded)[0].SessionID
				}
				tr, err := r.Prepare(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				s.checked = false
				res := tr.Run(context.Background(), s)
				if res.StopReason != tc.stop || !s.checked {
					t.Fatalf("turn %d: stop %q (%v), turn_ended seen %v", turn, res.StopReason, res.Err, s.checked)
				}
			}
		})
	}
}

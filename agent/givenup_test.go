package agent_test

import (
	"context"
	"sync"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// giveUpSink gives the turn up in its event log, as a reader on another
// replica does when the turn's process was cut off from the database
// longer than DeadAfter, when the turn sends an event of type at.
type giveUpSink struct {
	sink
	h    *harness
	at   coachd.EventType
	turn func() (string, int64)
	once sync.Once
	err  error
}

func (s *giveUpSink) Send(ev coachd.Event) error {
	if ev.Type == s.at {
		s.once.Do(func() {
			ctx := context.Background()
			sid, turn := s.turn()
			tl, err := s.h.store.TurnLogAt(ctx, s.h.user.ID, sid, turn)
			if err == nil {
				var given bool
				given, err = s.h.store.GiveUpTurn(ctx, s.h.user.ID, sid, turn, tl.AliveAt, []coachd.Event{
					{Turn: turn, Seq: 100, Type: coachd.EventError, Err: &coachd.Error{Code: "turn_interrupted", Retryable: true}},
					{Turn: turn, Seq: 101, Type: coachd.EventTurnEnded, StopReason: coachd.TurnError},
				})
				if err == nil && !given {
					err = coachd.Errorf(coachd.ECONFLICT, "not given up")
				}
			}
			s.err = err
		})
	}
	return s.sink.Send(ev)
}

// A turn its readers gave up (they told their clients turn_interrupted)
// stores none of its messages from then on, neither a tool round nor
// its reply, and ends interrupted itself; its spend is still settled and
// its session freed. Stored, its reply sat in history under a turn its
// followers were told was interrupted, and their retry asked again.
func TestGivenUpTurnStoresNothing(t *testing.T) {
	for name, c := range map[string]struct {
		at      coachd.EventType
		replies []anthropictest.Reply
	}{
		"Reply": {coachd.EventTextDelta, []anthropictest.Reply{anthropictest.Text("The whole reply.", 4)}},
		"Round": {coachd.EventToolCallReady, []anthropictest.Reply{
			anthropictest.Blocks(anthropictest.ToolUse("toolu_1", "echo", `{"x":1}`)),
			anthropictest.Text("After the tool.", 4),
		}},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, agent.Limits{})
			ctx := context.Background()
			for _, r := range c.replies {
				h.fake.Enqueue(r)
			}
			tr, err := h.runner.Prepare(ctx, agent.TurnRequest{User: h.user, Message: "question",
				Stream: &coachd.StreamStart{Owner: "proc_test"}})
			if err != nil {
				t.Fatal(err)
			}
			s := &giveUpSink{h: h, at: c.at, turn: func() (string, int64) { return tr.SessionID(), tr.StreamTurn() }}
			res := tr.Run(ctx, s)
			if s.err != nil {
				t.Fatalf("the give-up: %v", s.err)
			}
			if res.StopReason != coachd.TurnError || res.Err == nil || res.Err.Code != "turn_interrupted" {
				t.Errorf("the turn ended %q (%v), want interrupted as its readers were told", res.StopReason, res.Err)
			}
			msgs := h.history(res.SessionID)
			if len(msgs) != 1 || msgs[0].Content != "question" {
				for _, m := range msgs {
					t.Logf("stored %s %q", m.Role, m.Content)
				}
				t.Errorf("history holds %d messages, want the question alone", len(msgs))
			}
			if st, err := h.store.BudgetStatus(ctx, h.user.ID); err != nil || st.TokensReserved != 0 || st.TokensUsed == 0 {
				t.Errorf("budget after: %+v, %v; want the turn's spend charged and nothing held", st, err)
			}
			h.fake.Enqueue(anthropictest.Text("Again.", 4))
			if again := h.turn(agent.TurnRequest{SessionID: res.SessionID, Message: "next"}, &sink{}); again.StopReason != coachd.TurnEndTurn {
				t.Errorf("the next turn: %q (%v)", again.StopReason, again.Err)
			}
		})
	}
}

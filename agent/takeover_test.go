package agent_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// behindClock is a replica's clock an hour behind the database's: the
// leases it takes have run out when taken, as a turn's does once its
// process stalled past it (a cut connection, SIGSTOP).
type behindClock struct{}

func (behindClock) Now() time.Time { return time.Now().Add(-time.Hour) }

// takeoverSink lets replica B take the session for a new turn when
// replica A's turn sends an event of type at.
type takeoverSink struct {
	sink
	at   coachd.EventType
	take func() error
	once sync.Once
	err  error
}

func (s *takeoverSink) Send(ev coachd.Event) error {
	if ev.Type == s.at {
		s.once.Do(func() { s.err = s.take() })
	}
	return s.sink.Send(ev)
}

// A turn whose lease ran out while it stalled, and whose session another
// replica took for a new turn, stores nothing more in that session: not
// its tool round, not its reply. Stored, they went in after the other
// replica's question, answering a question they never saw, with that
// replica's reply after them.
func TestTakenOverTurnStoresNothing(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	ctx := context.Background()
	a := h.newRunner(nil, func(string) (*agent.Agent, bool) { return h.agent, true }, func(c *agent.Config) {
		c.Clock = behindClock{}
	})
	h.fake.Enqueue(anthropictest.Blocks(anthropictest.ToolUse("toolu_1", "echo", `{"x":1}`)))
	h.fake.Enqueue(anthropictest.Text("A's reply.", 4))
	trA, err := a.Prepare(ctx, agent.TurnRequest{User: h.user, Message: "A's question",
		Stream: &coachd.StreamStart{Owner: "proc_a"}})
	if err != nil {
		t.Fatal(err)
	}
	var trB *agent.Turn
	s := &takeoverSink{at: coachd.EventToolCallReady, take: func() error {
		var err error
		trB, err = h.runner.Prepare(ctx, agent.TurnRequest{User: h.user, SessionID: trA.SessionID(), Message: "B's question",
			Stream: &coachd.StreamStart{Owner: "proc_b"}})
		return err
	}}
	res := trA.Run(ctx, s)
	if s.err != nil {
		t.Fatalf("B's turn: %v", s.err)
	}
	if res.StopReason != coachd.TurnError || res.Err == nil || res.Err.Code != "turn_interrupted" {
		t.Errorf("A's turn ended %q (%v), want interrupted", res.StopReason, res.Err)
	}
	h.fake.Enqueue(anthropictest.Text("B's reply.", 4))
	if resB := trB.Run(ctx, &sink{}); resB.StopReason != coachd.TurnEndTurn {
		t.Errorf("B's turn: %q (%v)", resB.StopReason, resB.Err)
	}
	h.wantLines(t, res.SessionID, "user: A's question", "user: B's question", "assistant: B's reply.")
	if st, err := h.store.BudgetStatus(ctx, h.user.ID); err != nil || st.TokensReserved != 0 {
		t.Errorf("budget after: %+v, %v; want nothing held", st, err)
	}
}

// wantLines fails t unless the session's history is want, a line a
// message: its role, ": ", its text.
func (h *harness) wantLines(t *testing.T, sessionID string, want ...string) {
	t.Helper()
	var got []string
	for _, m := range h.history(sessionID) {
		got = append(got, string(m.Role)+": "+m.Content)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("history %q, want %q", got, want)
	}
}

package agent_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// gatedStore is the real store whose message writes behind the admission
// (AppendMessages, and EndTurn with messages) after the first `free` ones
// wait for open: a slow disk, made to order.
type gatedStore struct {
	coachd.Store
	free  int32
	calls atomic.Int32
	open  chan struct{}
}

func (g *gatedStore) AppendMessages(ctx context.Context, userID, sessionID string, msgs []*coachd.Message) error {
	if g.calls.Add(1) > g.free {
		<-g.open
	}
	return g.Store.AppendMessages(ctx, userID, sessionID, msgs)
}

// EndTurn waits like AppendMessages when it stores messages (a tool
// round's write, which charges the round with it, and the last reply).
func (g *gatedStore) EndTurn(ctx context.Context, userID string, e coachd.TurnEnd) (*coachd.Reservation, *coachd.Session, error) {
	if len(e.Messages) > 0 && g.calls.Add(1) > g.free {
		<-g.open
	}
	return g.Store.EndTurn(ctx, userID, e)
}

// checkingSink records, at the first text delta, how many messages the
// store held: what a crash at that moment would have kept.
type checkingSink struct {
	sink
	store     coachd.Store
	user, sid string
	once      sync.Once
	stored    int
	acked     int // messages stored when turn_started went out
}

func (c *checkingSink) Send(ev coachd.Event) error {
	if ev.Type == coachd.EventTurnStarted {
		c.sid = ev.SessionID
		msgs, _ := c.store.History(context.Background(), c.user, c.sid)
		c.acked = len(msgs)
	}
	if ev.Type == coachd.EventTextDelta {
		c.once.Do(func() {
			msgs, _ := c.store.History(context.Background(), c.user, c.sid)
			c.stored = len(msgs)
		})
	}
	return c.sink.Send(ev)
}

// A tool round is stored behind the next model call, but no text of the
// reply reaches the client before it is: the round's write is held until
// the fake has streamed its whole (slow) text reply, and the first text
// delta must still find the user message and the round stored.
func TestWriteBehindTextWaitsForRound(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	fake, url, replied := signallingFake(t)
	fake.Enqueue(
		anthropictest.Blocks(use("tu_1", "echo", `{"x":1}`)),
		anthropictest.Text("one two three four five", 5).Paced(0, 5*time.Millisecond),
	)
	gated := &gatedStore{Store: h.store, free: 0, open: make(chan struct{})}
	r := h.newRunner(nil, nil, func(c *agent.Config) {
		ts, _ := agent.NewToolset(echoTool)
		c.Tools = ts
		c.Store = gated
		c.Model = anthropic.New(anthropic.Config{APIKey: "test", BaseURL: url, MaxRetries: -1})
		c.Agents = func(string) (*agent.Agent, bool) {
			a := agent.DefaultAgent()
			a.Tools = []string{"echo"}
			return a, true
		}
	})
	go func() {
		<-replied // the tool call
		<-replied // the whole text reply: only now may the round be stored
		close(gated.open)
	}()
	tr, err := r.Prepare(context.Background(), agent.TurnRequest{User: h.user, Message: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	s := &checkingSink{store: h.store, user: h.user.ID}
	res := tr.Run(context.Background(), s)
	if res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("stop %q (%v)", res.StopReason, res.Err)
	}
	if s.acked < 1 {
		t.Fatalf("turn_started (the message's acknowledgement) went out before the user message was stored")
	}
	// user message, assistant tool_use, user tool_result
	if s.stored < 3 {
		t.Fatalf("at the first text delta the store held %d messages, want the user message and the round (3)", s.stored)
	}
	if got := len(h.history(res.SessionID)); got != 4 {
		t.Fatalf("stored %d messages, want 4", got)
	}
	h.assertValidHistory(res.SessionID)
}

// failingStore fails AppendMessages after the first `ok` calls.
type failingStore struct {
	coachd.Store
	ok    int32
	calls atomic.Int32
}

func (f *failingStore) AppendMessages(ctx context.Context, userID, sessionID string, msgs []*coachd.Message) error {
	if f.calls.Add(1) > f.ok {
		return coachd.Errorf(coachd.EINTERNAL, "disk full")
	}
	return f.Store.AppendMessages(ctx, userID, sessionID, msgs)
}

// AdmitTurn fails like AppendMessages when it stores the user message.
func (f *failingStore) AdmitTurn(ctx context.Context, a coachd.TurnAdmission) (*coachd.Admission, error) {
	if a.Message != nil && f.calls.Add(1) > f.ok {
		return nil, coachd.Errorf(coachd.EINTERNAL, "disk full")
	}
	return f.Store.AdmitTurn(ctx, a)
}

// EndTurn fails like AppendMessages when it stores messages (a tool
// round's write, which charges the round with it, and the last reply).
func (f *failingStore) EndTurn(ctx context.Context, userID string, e coachd.TurnEnd) (*coachd.Reservation, *coachd.Session, error) {
	if len(e.Messages) > 0 && f.calls.Add(1) > f.ok {
		return nil, nil, coachd.Errorf(coachd.EINTERNAL, "disk full")
	}
	return f.Store.EndTurn(ctx, userID, e)
}

// A write behind that fails ends the turn in an error before any text of
// the reply goes out, and the reservation is released, not leaked.
func TestWriteBehindFailureStopsText(t *testing.T) {
	for _, ok := range []int32{0, 1} { // the user message fails; the round fails
		h := newHarness(t, agent.Limits{})
		h.fake.Enqueue(
			anthropictest.Blocks(use("tu_1", "echo", `{"x":1}`)),
			anthropictest.Text("should never be shown", 5),
		)
		r := h.newRunner(append([]coachd.Tool{}, echoTool), func(string) (*agent.Agent, bool) {
			a := agent.DefaultAgent()
			a.Tools = []string{"echo"}
			return a, true
		}, func(c *agent.Config) { c.Store = &failingStore{Store: h.store, ok: ok} })
		tr, err := r.Prepare(context.Background(), agent.TurnRequest{User: h.user, Message: "hi"})
		if ok == 0 {
			// The user message is stored with the admission: the turn
			// is refused before it starts, nothing sent or stored.
			if err == nil {
				tr.Close()
				t.Fatalf("the admission storing the user message failed, and Prepare succeeded")
			}
			if n := len(h.fake.Requests()); n != 0 {
				t.Fatalf("%d model calls for a turn whose message was not stored", n)
			}
		} else {
			if err != nil {
				t.Fatal(err)
			}
			s := &sink{}
			res := tr.Run(context.Background(), s)
			if res.StopReason != coachd.TurnError || res.Err == nil {
				t.Fatalf("ok=%d: stop %q err %v, want an error", ok, res.StopReason, res.Err)
			}
			if n := len(s.of(coachd.EventTextDelta)); n != 0 {
				t.Fatalf("ok=%d: %d text deltas went out although their history was not stored", ok, n)
			}
		}
		st, err := h.store.BudgetStatus(context.Background(), h.user.ID)
		if err != nil {
			t.Fatal(err)
		}
		if st.TokensReserved != 0 {
			t.Fatalf("ok=%d: %d tokens still reserved after the failed turn", ok, st.TokensReserved)
		}
	}
}

// The user message is stored with the turn's admission, before the model
// is called: Prepare returns with it in the history, turn_started (its
// acknowledgement) goes out first, and an admission refused (here, the
// budget) stores nothing.
func TestAdmissionStoresMessage(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	h.fake.Enqueue(anthropictest.Text("one two three", 5))
	tr, err := h.runner.Prepare(context.Background(), agent.TurnRequest{User: h.user, Message: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	msgs := h.history(tr.SessionID())
	if len(msgs) != 1 || msgs[0].Role != coachd.RoleUser || coachd.BlocksText(msgs[0].Blocks) != "hi" || msgs[0].Seq == 0 {
		t.Fatalf("after Prepare the session holds %d messages, want the user message", len(msgs))
	}
	if n := len(h.fake.Requests()); n != 0 {
		t.Fatalf("%d model calls before Run", n)
	}
	s := &checkingSink{store: h.store, user: h.user.ID}
	res := tr.Run(context.Background(), s)
	if res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("stop %q (%v)", res.StopReason, res.Err)
	}
	if s.acked != 1 {
		t.Fatalf("turn_started went out with %d messages stored, want the user message (1)", s.acked)
	}
	if evs := s.sink.events; len(evs) == 0 || evs[0].Type != coachd.EventTurnStarted {
		t.Fatalf("first event %v, want turn_started", evs)
	}
	if got := h.history(res.SessionID); len(got) != 2 || got[0].ID != msgs[0].ID || got[0].Seq != msgs[0].Seq {
		t.Fatalf("history after the turn: %d messages, the user message %+v", len(got), got[0])
	}
	budget := int64(1)
	if _, err := h.store.UpdateUser(context.Background(), h.user.ID, coachd.UserUpdate{TokenBudget: &budget}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.runner.Prepare(context.Background(), agent.TurnRequest{User: h.user, SessionID: res.SessionID, Message: "more"}); coachd.ErrorCode(err) != coachd.EBUDGET {
		t.Fatalf("over budget: %v, want budget_exhausted", err)
	}
	if got := h.history(res.SessionID); len(got) != 2 {
		t.Fatalf("a refused admission left %d messages, want 2", len(got))
	}
}

// signallingFake is a fake Anthropic API that tells, on replied, each time
// it has sent a whole reply.
func signallingFake(t *testing.T) (fake *anthropictest.Server, url string, replied <-chan struct{}) {
	fake = anthropictest.New()
	done := make(chan struct{}, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fake.Handler().ServeHTTP(w, r)
		done <- struct{}{}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(fake.Close)
	return fake, srv.URL, done
}

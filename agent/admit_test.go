package agent_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// writeCounter counts the store's committed write transactions.
type writeCounter struct {
	coachd.NopObserver
	writes atomic.Int64
}

func (w *writeCounter) DBTransaction(kind string, _ time.Duration) {
	if kind == "write" {
		w.writes.Add(1)
	}
}

// A turn on an existing session writes once before its first model call
// (AdmitTurn: lease, reservation and the user message) and once after its
// reply (EndTurn: the reply, the settlement
// and the release). Before, the lease, the reservation, the reply, the
// settlement and the release were a transaction each.
func TestTurnWriteTransactions(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	first := h.turn(agent.TurnRequest{Message: "hello"}, &sink{})
	if first.StopReason != coachd.TurnEndTurn {
		t.Fatalf("first turn: %q (%v)", first.StopReason, first.Err)
	}
	wc := &writeCounter{}
	h.store.SetObserver(wc)
	defer h.store.SetObserver(coachd.NopObserver{})
	var atCall int64 = -1
	h.fake.SetScript(func(*anthropictest.Request) anthropictest.Reply {
		atCall = wc.writes.Load()
		return anthropictest.Text("hi again", 3)
	})
	tr, err := h.runner.Prepare(context.Background(), agent.TurnRequest{User: h.user, SessionID: first.SessionID, Message: "again"})
	if err != nil {
		t.Fatal(err)
	}
	if n := wc.writes.Load(); n != 1 {
		t.Fatalf("Prepare committed %d write transactions, want 1 (AdmitTurn)", n)
	}
	res := tr.Run(context.Background(), &sink{})
	if res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("turn: %q (%v)", res.StopReason, res.Err)
	}
	// At the call: the admission, which stored the user message too.
	if atCall != 1 {
		t.Fatalf("%d write transactions before the model call, want the admission (with the user message)", atCall)
	}
	// admission (with the user message), EndTurn
	if n := wc.writes.Load(); n != 2 {
		t.Fatalf("the turn committed %d write transactions, want 2", n)
	}
	if msgs := h.history(res.SessionID); len(msgs) != 4 || msgs[3].Role != coachd.RoleAssistant || msgs[3].ID != res.MessageID {
		t.Fatalf("history after the turn: %d messages", len(msgs))
	}
	// Settled: nothing held, both turns charged.
	bs, err := h.store.BudgetStatus(context.Background(), h.user.ID)
	if err != nil || bs.TokensReserved != 0 || bs.TokensUsed != first.Billed+res.Billed {
		t.Fatalf("budget %+v (%v), want %d used and nothing held", bs, err, first.Billed+res.Billed)
	}
	// The lease went with the settlement: the session takes a next turn.
	if next := h.turn(agent.TurnRequest{SessionID: res.SessionID, Message: "once more"}, &sink{}); next.Err != nil {
		t.Fatalf("next turn: %v", next.Err)
	}
}

// replicaWrites is the real store, where another replica stores a message
// on the session right after this runner's first read of it: the
// admission finds the session moved on and the turn reads it again.
type replicaWrites struct {
	coachd.Store
	once  sync.Once
	reads atomic.Int32
}

func (r *replicaWrites) ReadTurn(ctx context.Context, userID, id string, after int64) (*coachd.Session, []*coachd.Message, error) {
	s, msgs, err := r.Store.ReadTurn(ctx, userID, id, after)
	r.reads.Add(1)
	r.once.Do(func() {
		msg := &coachd.Message{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("note from the other replica")}}
		if err := r.Store.AppendMessages(ctx, userID, id, []*coachd.Message{msg}); err != nil {
			panic(err)
		}
	})
	return s, msgs, err
}

func TestAdmitReadsAgainWhenSessionChanged(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	first := h.turn(agent.TurnRequest{Message: "hello"}, &sink{})
	st := &replicaWrites{Store: h.store}
	r := h.newRunner(nil, nil, func(c *agent.Config) { c.Store = st })
	tr, err := r.Prepare(context.Background(), agent.TurnRequest{User: h.user, SessionID: first.SessionID, Message: "and now?"})
	if err != nil {
		t.Fatal(err)
	}
	if n := st.reads.Load(); n != 2 {
		t.Fatalf("session read %d times, want 2 (read again after the change)", n)
	}
	res := tr.Run(context.Background(), &sink{})
	if res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("turn: %q (%v)", res.StopReason, res.Err)
	}
	reqs := h.fake.Requests()
	if last := string(reqs[len(reqs)-1].Raw); !strings.Contains(last, "note from the other replica") {
		t.Fatalf("the model call missed the message stored before the admission: %s", last)
	}
	if msgs := h.history(res.SessionID); len(msgs) != 5 || msgs[2].Content != "note from the other replica" {
		t.Fatalf("history: %d messages", len(msgs))
	}
}

// A turn admitted with its event log (TurnRequest.Stream) but closed
// unrun leaves that log's turn ended, and its session free.
func TestAdmitStreamClosedUnrun(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	first := h.turn(agent.TurnRequest{Message: "hello"}, &sink{})
	ctx := context.Background()
	req := agent.TurnRequest{User: h.user, SessionID: first.SessionID, Message: "x",
		Stream: &coachd.StreamStart{Owner: "proc_test", Keep: 20}}
	tr, err := h.runner.Prepare(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	tl, err := h.store.LatestTurn(ctx, h.user.ID, first.SessionID)
	if err != nil || tr.StreamTurn() == 0 || tl.Turn != tr.StreamTurn() || tl.Owner != "proc_test" || tl.Ended {
		t.Fatalf("log turn %d, latest %+v (%v)", tr.StreamTurn(), tl, err)
	}
	tr.Close()
	if tl, err = h.store.LatestTurn(ctx, h.user.ID, first.SessionID); err != nil || !tl.Ended {
		t.Fatalf("after Close: %+v (%v)", tl, err)
	}
	tr, err = h.runner.Prepare(ctx, req)
	if err != nil {
		t.Fatalf("after Close: %v", err)
	}
	tr.Close()
}

// Another user naming a session whose turn runs is told it does not
// exist, not that it is busy.
func TestAdmitOtherUsersBusySession(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	first := h.turn(agent.TurnRequest{Message: "hello"}, &sink{})
	ctx := context.Background()
	tr, err := h.runner.Prepare(ctx, agent.TurnRequest{User: h.user, SessionID: first.SessionID, Message: "x"})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	eve := &coachd.User{Name: "eve", TokenBudget: 1000}
	if err := h.store.CreateUser(ctx, eve, "hash-eve"); err != nil {
		t.Fatal(err)
	}
	for _, wait := range []bool{false, true} {
		_, err := h.runner.Prepare(ctx, agent.TurnRequest{User: eve, SessionID: first.SessionID, Message: "x", Wait: wait})
		if coachd.ErrorCode(err) != coachd.ENOTFOUND {
			t.Fatalf("wait=%v: %v, want ENOTFOUND", wait, err)
		}
	}
	if _, err := h.runner.Prepare(ctx, agent.TurnRequest{User: h.user, SessionID: first.SessionID, Message: "x"}); coachd.ErrorCode(err) != coachd.ETURNINPROGRESS {
		t.Fatalf("the owner's second turn: %v", err)
	}
}

// failingEnd is the real store whose EndTurn fails, and whose
// AppendMessages fails too after `appends` calls (negative: never).
type failingEnd struct {
	coachd.Store
	appends int32
	calls   atomic.Int32
}

func (f *failingEnd) EndTurn(context.Context, string, coachd.TurnEnd) (*coachd.Reservation, *coachd.Session, error) {
	return nil, nil, coachd.Errorf(coachd.EINTERNAL, "disk full")
}

func (f *failingEnd) AppendMessages(ctx context.Context, userID, sessionID string, msgs []*coachd.Message) error {
	if f.appends >= 0 && f.calls.Add(1) > f.appends {
		return coachd.Errorf(coachd.EINTERNAL, "disk full")
	}
	return f.Store.AppendMessages(ctx, userID, sessionID, msgs)
}

// When the turn's one last write fails, its reply is stored and its
// reservation settled apart, before the session is freed; a reply that
// cannot be stored either fails the turn, whose reservation is aborted.
func TestEndTurnFallback(t *testing.T) {
	for _, appends := range []int32{-1, 0} { // the user message is stored with the admission
		h := newHarness(t, agent.Limits{})
		st := &failingEnd{Store: h.store, appends: appends}
		r := h.newRunner(nil, nil, func(c *agent.Config) { c.Store = st })
		tr, err := r.Prepare(context.Background(), agent.TurnRequest{User: h.user, Message: "hello"})
		if err != nil {
			t.Fatal(err)
		}
		s := &sink{}
		res := tr.Run(context.Background(), s)
		msgs := h.history(res.SessionID)
		if appends < 0 {
			if res.StopReason != coachd.TurnEndTurn || len(msgs) != 2 || msgs[1].Role != coachd.RoleAssistant {
				t.Fatalf("stop %q (%v), %d messages", res.StopReason, res.Err, len(msgs))
			}
			h.mustSettled(res, coachd.ReservationFinalized)
		} else {
			if res.StopReason != coachd.TurnError || len(msgs) != 1 {
				t.Fatalf("reply not storable: stop %q, %d messages", res.StopReason, len(msgs))
			}
			if last := s.events[len(s.events)-1]; last.Type != coachd.EventTurnEnded || last.StopReason != coachd.TurnError {
				t.Fatalf("last event %+v", last)
			}
			h.mustSettled(res, coachd.ReservationAborted)
		}
		// The session is free.
		if next := h.turn(agent.TurnRequest{SessionID: res.SessionID, Message: "again"}, &sink{}); next.Err != nil {
			t.Fatalf("next turn: %v", next.Err)
		}
	}
}

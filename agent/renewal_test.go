package agent_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// renewals is replica A's store, the harness's, telling when A's lease
// renewal (every third of its lease) ran once armed.
type renewals struct {
	coachd.Store
	mu    sync.Mutex
	armed chan struct{} // closed by the first renewal that ends once armed
}

func (r *renewals) arm() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.armed = make(chan struct{})
	return r.armed
}

func (r *renewals) ran() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.armed != nil {
		close(r.armed)
		r.armed = nil
	}
}

func (r *renewals) AcquireTurn(ctx context.Context, userID, sessionID, owner string, until time.Time) error {
	defer r.ran()
	return r.Store.AcquireTurn(ctx, userID, sessionID, owner, until)
}

func (r *renewals) RenewTurn(ctx context.Context, userID, sessionID, owner string, until time.Time) error {
	defer r.ran()
	return r.Store.(interface {
		RenewTurn(context.Context, string, string, string, time.Time) error
	}).RenewTurn(ctx, userID, sessionID, owner, until)
}

// A turn stalled past its lease, whose session another replica took for
// a whole turn and then released, does not take the lease back at its
// next renewal: taken back, its round and reply were stored after the
// other replica's reply, as if the session were still its.
func TestLostLeaseNotRenewed(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	ctx := context.Background()
	store := &renewals{Store: h.store}
	a := h.newRunner(nil, func(string) (*agent.Agent, bool) { return h.agent, true }, func(c *agent.Config) {
		c.Store, c.Clock, c.TurnLease = store, behindClock{}, 300*time.Millisecond
	})
	h.fake.Enqueue(anthropictest.Blocks(anthropictest.ToolUse("toolu_1", "echo", `{"x":1}`)))
	h.fake.Enqueue(anthropictest.Text("B's reply.", 4))
	h.fake.Enqueue(anthropictest.Text("A's reply.", 4))
	trA, err := a.Prepare(ctx, agent.TurnRequest{User: h.user, Message: "A's question",
		Stream: &coachd.StreamStart{Owner: "proc_a"}})
	if err != nil {
		t.Fatal(err)
	}
	s := &takeoverSink{at: coachd.EventToolCallReady, take: func() error {
		trB, err := h.runner.Prepare(ctx, agent.TurnRequest{User: h.user, SessionID: trA.SessionID(), Message: "B's question",
			Stream: &coachd.StreamStart{Owner: "proc_b"}})
		if err != nil {
			return err
		}
		if resB := trB.Run(ctx, &sink{}); resB.StopReason != coachd.TurnEndTurn {
			t.Errorf("B's turn: %q (%v)", resB.StopReason, resB.Err)
		}
		<-store.arm() // A's renewal runs once B's turn released the session
		return nil
	}}
	res := trA.Run(ctx, s)
	if s.err != nil {
		t.Fatalf("B's turn: %v", s.err)
	}
	if res.StopReason != coachd.TurnError || res.Err == nil || res.Err.Code != "turn_interrupted" {
		t.Errorf("A's turn ended %q (%v), want interrupted", res.StopReason, res.Err)
	}
	h.wantLines(t, res.SessionID, "user: A's question", "user: B's question", "assistant: B's reply.")
}

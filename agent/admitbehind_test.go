package agent_test

import (
	"context"
	"sync"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// heldCommitStore is the real store whose admissions left behind
// (TurnAdmission.Behind) report their commit only once open is closed,
// and then fail with fail when it is set: a slow, or failing, disk.
type heldCommitStore struct {
	coachd.Store
	open   chan struct{}
	fail   error
	behind int // admissions that came with Behind (one turn at a time)
}

func (s *heldCommitStore) AdmitTurn(ctx context.Context, a coachd.TurnAdmission) (*coachd.Admission, error) {
	adm, err := s.Store.AdmitTurn(ctx, a)
	if err != nil || adm.Commit == nil {
		return adm, err
	}
	s.behind++
	commit := adm.Commit
	adm.Commit = sync.OnceValue(func() error {
		<-s.open
		if err := commit(); err != nil {
			return err
		}
		return s.fail
	})
	return adm, nil
}

// behindRunner is a runner over h's store, held by a heldCommitStore,
// calling the fake at url.
func behindRunner(h *harness, url string, fail error) (*agent.Runner, *heldCommitStore) {
	held := &heldCommitStore{Store: h.store, open: make(chan struct{}), fail: fail}
	r := h.newRunner(nil, nil, func(c *agent.Config) {
		c.Store = held
		c.Model = anthropic.New(anthropic.Config{APIKey: "test", BaseURL: url, MaxRetries: -1, Untraced: true})
	})
	return r, held
}

// With TurnRequest.Behind the model request leaves before the admission
// is stored, and the client hears nothing of the turn until it is: the
// fake answers the whole reply while the commit is held, and not one
// event (turn_started first among them) has gone out; once the commit
// is done, turn_started leads and the reply follows, all stored.
func TestAdmissionBehindFirstRequest(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	fake, url, replied := signallingFake(t)
	fake.Enqueue(anthropictest.Text("the whole reply", 3))
	r, held := behindRunner(h, url, nil)
	tr, err := r.Prepare(context.Background(), agent.TurnRequest{User: h.user, Message: "hi", Behind: true})
	if err != nil {
		t.Fatal(err)
	}
	if held.behind != 1 {
		t.Fatalf("%d admissions left behind, want 1", held.behind)
	}
	s := &sink{}
	done := make(chan *agent.Result)
	go func() { done <- tr.Run(context.Background(), s) }()
	<-replied // the fake has sent its whole reply: the request left before the commit
	s.mu.Lock()
	early := len(s.events)
	s.mu.Unlock()
	if early != 0 {
		t.Fatalf("%d events went out before the admission was stored, want none", early)
	}
	close(held.open)
	if err := tr.Admitted(); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("stop %q (%v)", res.StopReason, res.Err)
	}
	if len(s.events) == 0 || s.events[0].Type != coachd.EventTurnStarted {
		t.Fatalf("the first event is not turn_started: %+v", s.events)
	}
	if n := len(s.of(coachd.EventTurnStarted)); n != 1 {
		t.Fatalf("%d turn_started events, want 1", n)
	}
	if got := coachd.BlocksText(h.history(res.SessionID)[1].Blocks); got != "the whole reply" {
		t.Fatalf("stored reply %q", got)
	}
	h.mustSettled(res, coachd.ReservationFinalized)
}

// An admission whose commit fails fails its turn: its request had left,
// but no event of the reply, nor turn_started, goes out, and Admitted
// says why (the server answers that as an error, before any byte of a
// stream). What the store then holds is the store's own test
// (sqlstore's TestAdmitTurnBehindFails).
func TestAdmissionBehindFails(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	fake, url, _ := signallingFake(t)
	fake.Enqueue(anthropictest.Text("should never be shown", 3))
	r, held := behindRunner(h, url, coachd.Errorf(coachd.EINTERNAL, "disk full"))
	tr, err := r.Prepare(context.Background(), agent.TurnRequest{User: h.user, Message: "hi", Behind: true})
	if err != nil {
		t.Fatal(err)
	}
	close(held.open)
	s := &sink{}
	res := tr.Run(context.Background(), s)
	if res.StopReason != coachd.TurnError || res.Err == nil || res.Err.Code != coachd.EINTERNAL {
		t.Fatalf("stop %q err %v, want an internal error", res.StopReason, res.Err)
	}
	if n := len(fake.Requests()); n != 1 {
		t.Fatalf("%d model requests, want the one that left before the commit", n)
	}
	for _, typ := range []coachd.EventType{coachd.EventTurnStarted, coachd.EventTextDelta} {
		if n := len(s.of(typ)); n != 0 {
			t.Fatalf("%d %s events for a turn whose admission was not stored", n, typ)
		}
	}
	if err := tr.Admitted(); coachd.ErrorCode(err) != coachd.EINTERNAL {
		t.Fatalf("Admitted: %v, want the commit's failure", err)
	}
}

// Without Behind, and for a turn that stores no new message (a retry),
// the admission is committed before Prepare returns.
func TestAdmissionBehindOnlyAsked(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	fake, url, _ := signallingFake(t)
	fake.Enqueue(anthropictest.Status(529, nil, ""), anthropictest.Text("here now", 1))
	r, held := behindRunner(h, url, nil)
	close(held.open)
	tr, err := r.Prepare(context.Background(), agent.TurnRequest{User: h.user, Message: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	res := tr.Run(context.Background(), &sink{})
	if res.StopReason != coachd.TurnError {
		t.Fatalf("first turn: %s %v", res.StopReason, res.Err)
	}
	tr, err = r.Prepare(context.Background(), agent.TurnRequest{User: h.user, SessionID: res.SessionID, Retry: true, Behind: true})
	if err != nil {
		t.Fatal(err)
	}
	if res := tr.Run(context.Background(), &sink{}); res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("retry: %s %v", res.StopReason, res.Err)
	}
	if held.behind != 0 {
		t.Fatalf("%d admissions left behind, want none", held.behind)
	}
}

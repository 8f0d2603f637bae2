package stream_test

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/stream"
)

// waitWoken waits for a Park's wake, failing after a while.
func waitWoken(t *testing.T, woke <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-woke:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: the parked follower was not woken", what)
	}
}

// TestParkIdle: an idle follower parks holding no goroutine; it is woken
// by a turn begun here, by a turn begun on another replica (the shared
// poller), by its context, and by Shutdown; FollowUntilIdle then goes on
// from where it stopped, with nothing missed or sent twice.
func TestParkIdle(t *testing.T) {
	e := mustEnv(t, filepath.Join(t.TempDir(), "s.db"))
	ctx := context.Background()
	sid := e.session(t)
	var got []coachd.Event
	send := func(ev coachd.Event) error { got = append(got, ev); return nil }
	nop := func() error { return nil }
	at, err := e.a.FollowUntilIdle(ctx, e.user.ID, sid, coachd.EventID{}, send, nop)
	if err != nil || len(got) != 0 {
		t.Fatalf("an idle session: %v, %d events", err, len(got))
	}
	park := func(h *stream.Hub, ctx context.Context, at stream.Idle) <-chan struct{} {
		woke := make(chan struct{})
		h.Park(ctx, e.user.ID, sid, at, func() { close(woke) })
		return woke
	}

	t.Run("TurnHere", func(t *testing.T) {
		woke := park(e.a, ctx, at)
		if n := e.a.Parked(); n != 1 {
			t.Fatalf("parked: %d", n)
		}
		e.play(t, sid, 1, 5, rand.New(rand.NewPCG(1, 2)))
		waitWoken(t, woke, "a turn begun here")
		if n := e.a.Parked(); n != 0 {
			t.Errorf("parked after the wake: %d", n)
		}
		got = got[:0]
		if at, err = e.a.FollowUntilIdle(ctx, e.user.ID, sid, at.After, send, nop); err != nil {
			t.Fatal(err)
		}
		if len(got) != 5 || got[4].Type != coachd.EventTurnEnded || at.After != (coachd.EventID{Turn: 1, Seq: 5}) {
			t.Errorf("after the wake: %d events, stopped at %v", len(got), at.After)
		}
	})

	t.Run("TurnOnOtherReplica", func(t *testing.T) {
		woke := park(e.b, ctx, at)                        // b runs no turn: only its poller can tell
		e.play(t, sid, 1, 3, rand.New(rand.NewPCG(3, 4))) // on a
		waitWoken(t, woke, "a turn begun on the other replica")
		got = got[:0]
		if at, err = e.b.FollowUntilIdle(ctx, e.user.ID, sid, at.After, send, nop); err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || got[0].ID() != (coachd.EventID{Turn: 2, Seq: 1}) {
			t.Errorf("after the wake: %d events from %v", len(got), got)
		}
	})

	t.Run("NothingNew", func(t *testing.T) {
		// The poller looks at the log for a while; nothing new: asleep.
		woke := park(e.b, ctx, at)
		deadline := time.Now().Add(20 * e.b.PollEvery)
		for time.Now().Before(deadline) {
			select {
			case <-woke:
				t.Fatal("woken with nothing new in the log")
			case <-time.After(e.b.PollEvery):
			}
		}
		cctx, cancel := context.WithCancel(ctx)
		woke2 := park(e.b, cctx, at)
		cancel()
		waitWoken(t, woke2, "its context done")
		e.b.Shutdown()
		waitWoken(t, woke, "Shutdown")
		got = got[:0]
		_, err := e.b.FollowUntilIdle(ctx, e.user.ID, sid, at.After, send, nop)
		if err != stream.ErrShutdown || len(got) != 1 || got[0].Err == nil || got[0].Err.Code != stream.CodeShutdown {
			t.Errorf("after Shutdown: %v, %v", err, got)
		}
		// Parking on a hub that is down wakes at once.
		waitWoken(t, park(e.b, ctx, at), "parked after Shutdown")
		if n := e.b.Parked(); n != 0 {
			t.Errorf("parked on a hub that is down: %d", n)
		}
	})
}

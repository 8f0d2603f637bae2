package stream_test

import (
	"context"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore"
	"github.com/coachd/coachd/sqlstore/pgtest"
	"github.com/coachd/coachd/stream"
)

// lookedStore is a reader's hub's store that, at the reader's first look
// at the session's latest turn, runs meanwhile before answering.
type lookedStore struct {
	*sqlstore.DB
	meanwhile chan func()
}

func (s lookedStore) LatestTurn(ctx context.Context, userID, sessionID string) (coachd.TurnLog, error) {
	tl, err := s.DB.LatestTurn(ctx, userID, sessionID)
	select {
	case f := <-s.meanwhile:
		f()
	default:
	}
	return tl, err
}

// TestFollowAfterFailoverPG: a reader that first looks at a running turn
// just after a failover (a promoted standby, whose postmaster started long
// ago) or a partition between the turn's process and the database finds
// the turn's last sign of life older than DeadAfter, by no fault of the
// turn: its process could not write. The reader gave the turn up at once
// (turn_interrupted), a moment before the turn's next sign of life, and
// the rest of the reply, which the turn went on to store, never reached
// the log. A reader now gives a turn up only once it has seen it silent
// for DeadAfter itself: it gets the turn whole.
func TestFollowAfterFailoverPG(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	e := mustEnv(t, dsn)
	sid := e.session(t)
	turn := e.halfTurn(t, sid, "proc_elsewhere")
	meanwhile := make(chan func(), 1)
	r := stream.NewHub(lookedStore{e.db, meanwhile}, nil)
	r.FlushEvery, r.PollEvery, r.AliveEvery, r.DeadAfter = e.a.FlushEvery, e.a.PollEvery, e.a.AliveEvery, 2*time.Second
	// The database is away from the turn's process (it cannot write)
	// until its last sign of life is older than DeadAfter.
	for {
		tl, err := e.db.LatestTurn(ctx, e.user.ID, sid)
		if err != nil {
			t.Fatal(err)
		}
		if tl.Silent > r.DeadAfter {
			break
		}
		<-time.After(r.DeadAfter - tl.Silent)
	}
	// The turn's process writes again just after the reader's first look.
	meanwhile <- func() {
		if _, err := e.db.AppendEvents(ctx, e.user.ID, sid, turn, []coachd.Event{
			{Turn: turn, Seq: 3, Type: coachd.EventTextDelta, Text: " and"},
		}, false); err != nil {
			t.Error(err)
		}
	}
	got := make(chan coachd.Event, 16)
	rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- r.Follow(rctx, e.user.ID, sid, coachd.EventID{}, turn, func(ev coachd.Event) error {
			got <- ev
			return nil
		})
	}()
	next := func() coachd.Event {
		t.Helper()
		select {
		case ev := <-got:
			return ev
		default:
		}
		select {
		case ev := <-got:
			return ev
		case err := <-done:
			if len(got) > 0 {
				return <-got
			}
			t.Fatalf("reader ended: %v", err)
		}
		return coachd.Event{}
	}
	for ev := next(); ev.Seq < 3; ev = next() {
		if ev.Seq == 2 && ev.Text != "Halfway" {
			t.Fatalf("before the failover: %+v", ev)
		}
	}
	if _, err := e.db.AppendEvents(ctx, e.user.ID, sid, turn, []coachd.Event{
		{Turn: turn, Seq: 4, Type: coachd.EventTextDelta, Text: " the rest."},
		{Turn: turn, Seq: 5, Type: coachd.EventTurnEnded, StopReason: coachd.TurnEndTurn},
	}, true); err != nil {
		t.Fatal(err)
	}
	if ev := next(); ev.Text != " the rest." {
		t.Fatalf("after the turn's next sign of life the reader got %+v (err %+v), want the rest of its reply", ev, ev.Err)
	}
	if ev := next(); ev.Type != coachd.EventTurnEnded || ev.StopReason != coachd.TurnEndTurn {
		t.Fatalf("end: %+v", ev)
	}
	if err := <-done; err != nil {
		t.Fatalf("Follow: %v", err)
	}
}

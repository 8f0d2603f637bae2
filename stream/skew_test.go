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

// skewed is a replica's clock off the real one by its value.
type skewed time.Duration

func (s skewed) Now() time.Time { return time.Now().Add(time.Duration(s)) }

// TestAliveAcrossSkewPG: a turn running on one replica is alive for a
// reader on another whose clock disagrees by more than DeadAfter. The
// turn's signs of life were stamped with the running replica's clock and
// judged with the reader's: a replica 10 s ahead gave every turn running
// elsewhere up as dead (turn_interrupted), and the rest of the turn never
// reached its log.
func TestAliveAcrossSkewPG(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	open := func(clock coachd.Clock) *sqlstore.DB {
		db, err := sqlstore.Open(ctx, dsn, clock)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		if err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		return db
	}
	// Replica a's clock runs 10 s behind b's; DeadAfter is 5 s.
	dbA, dbB := open(skewed(-10*time.Second)), open(coachd.SystemClock{})
	u := &coachd.User{Name: "alice", TokenBudget: 1000}
	if err := dbA.CreateUser(ctx, u, "hash-alice"); err != nil {
		t.Fatal(err)
	}
	s := &coachd.Session{UserID: u.ID, Agent: "coach", Title: "t"}
	if err := dbA.CreateSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	a, b := stream.NewHub(dbA, nil), stream.NewHub(dbB, nil)
	for _, h := range []*stream.Hub{a, b} {
		h.FlushEvery, h.PollEvery, h.AliveEvery = time.Millisecond, 2*time.Millisecond, 20*time.Millisecond
	}

	l, err := a.Begin(ctx, u.ID, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan coachd.Event, 16)
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- b.Follow(rctx, u.ID, s.ID, coachd.EventID{}, l.Turn(), func(ev coachd.Event) error {
			got <- ev
			return nil
		})
	}()
	next := func() coachd.Event {
		t.Helper()
		select {
		case ev := <-got:
			return ev
		case err := <-done:
			t.Fatalf("reader ended: %v", err)
		}
		return coachd.Event{}
	}
	l.Send(coachd.Event{Seq: 1, Type: coachd.EventTurnStarted, SessionID: s.ID})
	l.Send(coachd.Event{Seq: 2, Type: coachd.EventTextDelta, Text: "Hello"})
	for ev := next(); ev.Seq < 2; ev = next() {
	}
	// The reader on b looks at the turn's life after each read of the
	// log: by the time it reads the next text, it has looked once.
	l.Send(coachd.Event{Seq: 3, Type: coachd.EventTextDelta, Text: " world"})
	if ev := next(); ev.Type != coachd.EventTextDelta || ev.Text != " world" {
		t.Fatalf("after Hello the reader on the other replica got %+v (err %+v), want the turn's next text", ev, ev.Err)
	}
	l.Send(coachd.Event{Seq: 4, Type: coachd.EventTurnEnded, StopReason: coachd.TurnEndTurn})
	if ev := next(); ev.Type != coachd.EventTurnEnded || ev.StopReason != coachd.TurnEndTurn {
		t.Fatalf("end: %+v", ev)
	}
	if err := <-done; err != nil {
		t.Fatalf("Follow: %v", err)
	}
}

package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

// TestTurnLeaseClockPG: on Postgres a turn's lease is timed by the
// database's clock, so replicas whose clocks disagree (skew, or one
// replica's clock jumping ahead) never both hold one session's turn. The
// lease was written and checked with each replica's own clock: a replica
// 15 s ahead found a live 10 s lease run out and took the session while
// the first replica's turn still ran.
func TestTurnLeaseClockPG(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	clockA, clockB := newClock(), newClock()
	clockB.Add(15 * time.Second) // replica B's clock runs 15 s ahead of A's
	a := MustOpen(t, dsn, clockA)
	b := MustOpen(t, dsn, clockB)
	u := budgetUser(t, a, 1000)
	const lease = 10 * time.Second

	t.Run("AcquireTurn", func(t *testing.T) {
		s := mustSession(t, a, u)
		if err := a.AcquireTurn(ctx, u.ID, s.ID, "A", clockA.Now().Add(lease)); err != nil {
			t.Fatal(err)
		}
		if err := b.AcquireTurn(ctx, u.ID, s.ID, "B", clockB.Now().Add(lease)); coachd.ErrorCode(err) != coachd.ETURNINPROGRESS {
			t.Fatalf("replica B, 15 s ahead, took A's live lease: %v", err)
		}
		// A's own clock jumps a minute ahead: its lease, renewed on the
		// new time, still holds for B, and B's lease is still refused.
		clockA.Add(time.Minute)
		if err := a.AcquireTurn(ctx, u.ID, s.ID, "A", clockA.Now().Add(lease)); err != nil {
			t.Fatalf("renewal after A's clock jumped: %v", err)
		}
		if err := b.AcquireTurn(ctx, u.ID, s.ID, "B", clockB.Now().Add(lease)); coachd.ErrorCode(err) != coachd.ETURNINPROGRESS {
			t.Fatalf("replica B took A's renewed lease: %v", err)
		}
		if err := a.ReleaseTurn(ctx, u.ID, s.ID, "A"); err != nil {
			t.Fatal(err)
		}
		if err := b.AcquireTurn(ctx, u.ID, s.ID, "B", clockB.Now().Add(lease)); err != nil {
			t.Fatalf("after A released: %v", err)
		}
	})
	t.Run("AdmitTurn", func(t *testing.T) {
		s := mustSession(t, a, u)
		if _, err := a.AdmitTurn(ctx, admission(s, "A", clockA.Now().Add(lease), 10)); err != nil {
			t.Fatal(err)
		}
		seen, err := b.FindSession(ctx, u.ID, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.AdmitTurn(ctx, admission(seen, "B", clockB.Now().Add(lease), 10)); coachd.ErrorCode(err) != coachd.ETURNINPROGRESS {
			t.Fatalf("replica B, 15 s ahead, admitted a second turn on the session: %v", err)
		}
	})
	t.Run("RunsOut", func(t *testing.T) {
		// A lease that ran out (its owner died) is still taken over: an
		// owner that leased for no time at all frees the session at once.
		s := mustSession(t, a, u)
		if err := a.AcquireTurn(ctx, u.ID, s.ID, "A", clockA.Now()); err != nil {
			t.Fatal(err)
		}
		if err := b.AcquireTurn(ctx, u.ID, s.ID, "B", clockB.Now().Add(lease)); err != nil {
			t.Fatalf("a lease run out was not taken over: %v", err)
		}
	})
}

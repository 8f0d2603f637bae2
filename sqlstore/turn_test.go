package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

// TestTurnLease: one owner at a time, scoped to the user; a lease left by
// a dead owner runs out; release frees it only for its owner.
func TestTurnLease(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			clock := newClock()
			db := MustOpen(t, b.newDSN(t), clock)
			u := MustCreateUser(t, db, "a")
			other := MustCreateUser(t, db, "b")
			s := &coachd.Session{UserID: u.ID}
			if err := db.CreateSession(ctx, s); err != nil {
				t.Fatal(err)
			}
			until := clock.Now().Add(time.Minute)
			if err := db.AcquireTurn(ctx, u.ID, s.ID, "A", until); err != nil {
				t.Fatal(err)
			}
			if err := db.AcquireTurn(ctx, u.ID, s.ID, "B", until); coachd.ErrorCode(err) != coachd.ETURNINPROGRESS {
				t.Fatalf("second owner: %v", err)
			}
			if err := db.AcquireTurn(ctx, other.ID, s.ID, "C", until); coachd.ErrorCode(err) != coachd.ENOTFOUND {
				t.Fatalf("another user's session: %v", err)
			}
			if err := db.ReleaseTurn(ctx, u.ID, s.ID, "B"); err != nil {
				t.Fatal(err)
			}
			if err := db.AcquireTurn(ctx, u.ID, s.ID, "B", until); coachd.ErrorCode(err) != coachd.ETURNINPROGRESS {
				t.Fatalf("a stranger's release freed the lease: %v", err)
			}
			if err := db.ReleaseTurn(ctx, u.ID, s.ID, "A"); err != nil {
				t.Fatal(err)
			}
			if err := db.AcquireTurn(ctx, u.ID, s.ID, "B", until); err != nil {
				t.Fatalf("after release: %v", err)
			}
			// B dies holding the lease: once it runs out, C gets the turn.
			// On Postgres it runs out by the database's clock, not the
			// process's (TestTurnLeaseClockPG): it is aged there.
			clock.Add(2 * time.Minute)
			if b.name == "postgres" {
				if err := db.AcquireTurn(ctx, u.ID, s.ID, "C", clock.Now().Add(time.Minute)); coachd.ErrorCode(err) != coachd.ETURNINPROGRESS {
					t.Fatalf("the process's clock jumping freed the lease: %v", err)
				}
				if err := rawExec(t, db, `UPDATE sessions SET turn_until = turn_until - interval '2 minutes' WHERE id = ?`, s.ID); err != nil {
					t.Fatal(err)
				}
			}
			if err := db.AcquireTurn(ctx, u.ID, s.ID, "C", clock.Now().Add(time.Minute)); err != nil {
				t.Fatalf("after expiry: %v", err)
			}
		})
	}
}

// TestExpireSessions: only the agent's active sessions idle for longer
// than the limit, and none with a turn running.
func TestExpireSessions(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			clock := newClock()
			db := MustOpen(t, b.newDSN(t), clock)
			u := MustCreateUser(t, db, "a")
			mk := func(agent string) *coachd.Session {
				s := &coachd.Session{UserID: u.ID, Agent: agent}
				if err := db.CreateSession(ctx, s); err != nil {
					t.Fatal(err)
				}
				return s
			}
			idle, busy, other := mk("sage"), mk("sage"), mk("coach")
			if err := db.AcquireTurn(ctx, u.ID, busy.ID, "A", clock.Now().Add(24*time.Hour)); err != nil {
				t.Fatal(err)
			}
			clock.Add(2 * time.Hour)
			fresh := mk("sage")
			n, err := db.ExpireSessions(ctx, "sage", time.Hour)
			if err != nil || n != 1 {
				t.Fatalf("expired %d, %v; want 1", n, err)
			}
			for s, want := range map[*coachd.Session]coachd.SessionStatus{idle: coachd.SessionExpired, busy: coachd.SessionActive, other: coachd.SessionActive, fresh: coachd.SessionActive} {
				got, err := db.FindSession(ctx, u.ID, s.ID)
				if err != nil || got.Status != want {
					t.Errorf("session of %s: %v %v, want %s", s.Agent, got.Status, err, want)
				}
			}
		})
	}
}

package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

// TestHoldClockPG: on Postgres a reservation's hold is timed by the
// database's clock, as a turn's lease is (TestTurnLeaseClockPG), so a
// replica whose clock runs ahead of the one that reserved does not find
// a live hold expired. Its expiry was written with the reserving
// replica's clock and judged with the reading one's: a replica 15 s
// ahead released a live 10 s hold at once (its sweeper, or the user's
// next reservation on it), and the user's next turn spent the tokens
// the first was still spending.
func TestHoldClockPG(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	clockA, clockB := newClock(), newClock()
	clockB.Add(15 * time.Second) // replica B's clock runs 15 s ahead of A's
	a, b := MustOpen(t, dsn, clockA), MustOpen(t, dsn, clockB)
	const ttl = 10 * time.Second
	for _, db := range []interface{ SetBudgetConfig(coachd.BudgetConfig) }{a, b} {
		db.SetBudgetConfig(coachd.BudgetConfig{TTL: ttl})
	}
	u := budgetUser(t, a, 1000)
	res, err := a.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, Agent: "coach", Estimate: 800})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("Sweeper", func(t *testing.T) {
		if n, err := b.ExpireReservations(ctx); err != nil || n != 0 {
			t.Fatalf("replica B, 15 s ahead, expired %d live holds (%v)", n, err)
		}
		mustStatus(t, b, u.ID, 0, 800)
	})
	t.Run("Reserve", func(t *testing.T) {
		_, err := b.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, Agent: "coach", Estimate: 800})
		wantCode(t, err, coachd.EBUDGET)
		mustStatus(t, b, u.ID, 0, 800)
	})
	t.Run("AdmitTurn", func(t *testing.T) {
		s := mustSession(t, b, u)
		adm := admission(s, "B", clockB.Now().Add(time.Minute), 800)
		adm.Message = &coachd.Message{Role: coachd.RoleUser, Content: "hi"}
		_, err := b.AdmitTurn(ctx, adm)
		wantCode(t, err, coachd.EBUDGET)
		mustStatus(t, b, u.ID, 0, 800)
	})
	t.Run("Exact", func(t *testing.T) {
		// The expiry a reservation returns is the one stored (a
		// settlement from the caller's copy is on condition of it).
		got, err := b.FindReservation(ctx, u.ID, res.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !got.ExpiresAt.Equal(res.ExpiresAt) {
			t.Fatalf("stored expiry %v, Reserve returned %v", got.ExpiresAt, res.ExpiresAt)
		}
	})
	t.Run("RunsOut", func(t *testing.T) {
		// A hold whose time ran out by the database's clock is released.
		if err := rawExec(t, a, `UPDATE reservations SET expires_at = expires_at - interval '1 minute' WHERE id = ?`, res.ID); err != nil {
			t.Fatal(err)
		}
		if n, err := b.ExpireReservations(ctx); err != nil || n != 1 {
			t.Fatalf("expired %d holds (%v), want 1", n, err)
		}
		mustStatus(t, b, u.ID, 0, 0)
	})
}

// passTime moves clock on by d and, on Postgres, where holds are timed
// by the database's clock (TestHoldClockPG), ages the holds stored by d
// as well: the process's clock alone does not expire them there.
func passTime(tb testing.TB, db *sqlstore.DB, clock *fakeClock, d time.Duration) {
	tb.Helper()
	clock.Add(d)
	if db.Dialect() != "postgres" {
		return
	}
	if err := rawExec(tb, db, `UPDATE reservations SET expires_at = expires_at - ?::bigint * interval '1 microsecond'`, d.Microseconds()); err != nil {
		tb.Fatal(err)
	}
}

// skewedClock is a replica's clock off the real one by its value.
type skewedClock time.Duration

func (s skewedClock) Now() time.Time { return time.Now().Add(time.Duration(s)) }

// TestSweepLimitsSkewPG: a rate window still counted by a replica whose
// clock runs behind another's is not swept because the replica ahead
// already counts the next one. The sweeper took any window a later one
// followed for ended: a replica 15 s ahead began the next window, the
// sweep deleted the current one with its count, and the replica behind
// counted it again from nothing: a burst of twice the limit more.
func TestSweepLimitsSkewPG(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	clockA, clockB := skewedClock(0), skewedClock(15*time.Second)
	a, b := MustOpen(t, dsn, clockA), MustOpen(t, dsn, clockB)
	const per, limit = 10 * time.Second, 2
	// burst reports whether A's window took more than its limit, or
	// false with rolled when A's window ended meanwhile (then it is
	// tried again: a run takes milliseconds of the 10 s).
	burst := func() (over, rolled bool) {
		u := budgetUser(t, a, 1000)
		hit := func(db *sqlstore.DB, clock coachd.Clock) bool {
			t.Helper()
			_, ok, err := db.HitLimit(ctx, u.ID, coachd.LimitHit{Key: "rate/10s", Window: clock.Now().Truncate(per), Limit: limit})
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		window := clockA.Now().Truncate(per)
		for range limit {
			if !hit(a, clockA) {
				t.Fatal("refused under the limit")
			}
		}
		if !hit(b, clockB) { // B, 15 s ahead, counts a later window
			t.Fatal("replica B refused in its own window")
		}
		if err := b.SweepLimits(ctx, clockB.Now()); err != nil {
			t.Fatal(err)
		}
		over = hit(a, clockA)
		return over, !clockA.Now().Truncate(per).Equal(window)
	}
	for range 3 {
		over, rolled := burst()
		if rolled {
			continue
		}
		if over {
			t.Fatal("replica A counted its full window again after the sweep")
		}
		return
	}
	t.Fatal("A's window ended during each of 3 runs")
}

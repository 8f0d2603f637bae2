package sqlstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

// TestLimitWindowClockPG: on Postgres a rate window begins by the
// database's clock, so replicas whose clocks disagree count one user's
// requests in one window. Each began it by its own clock: with replica B
// an hour and a half ahead of A, a user who had used up a limit of 2 on
// A had 2 more at once on B, whose window was another one, and the
// limit was twice itself (with a skew of seconds, for seconds of every
// window). Both the count apart (HitLimit) and the one in a turn's
// admission (AdmitTurn, one statement) are shown.
func TestLimitWindowClockPG(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	clockA, clockB := skewedClock(0), skewedClock(90*time.Minute)
	a, b := MustOpen(t, dsn, clockA), MustOpen(t, dsn, clockB)
	const per, limit = time.Hour, 2
	hit := func(clock coachd.Clock) coachd.LimitHit {
		return coachd.LimitHit{Key: "rate/1h0m0s", Window: clock.Now().Truncate(per), Per: per, Limit: limit}
	}
	// burst fills a new user's window on A, then counts once more on B
	// with more: it reports whether B allowed it, or rolled when A's
	// window ended meanwhile (then it is tried again).
	burst := func(t *testing.T, more func(u *coachd.User) bool) (allowed, rolled bool) {
		t.Helper()
		u := budgetUser(t, a, 1000)
		window := clockA.Now().Truncate(per)
		for range limit {
			if _, ok, err := a.HitLimit(ctx, u.ID, hit(clockA)); err != nil || !ok {
				t.Fatalf("refused under the limit: %v", err)
			}
		}
		allowed = more(u)
		return allowed, !clockA.Now().Truncate(per).Equal(window)
	}
	run := func(t *testing.T, more func(u *coachd.User) bool) {
		for range 3 {
			allowed, rolled := burst(t, more)
			if rolled {
				continue
			}
			if allowed {
				t.Fatal("replica B, 90 min ahead, counted in a window of its own: the user's limit of 2 took a third request")
			}
			return
		}
		t.Fatal("A's window ended during each of 3 runs")
	}

	t.Run("HitLimit", func(t *testing.T) {
		run(t, func(u *coachd.User) bool {
			n, ok, err := b.HitLimit(ctx, u.ID, hit(clockB))
			if err != nil {
				t.Fatal(err)
			}
			if !ok && n != limit {
				t.Fatalf("refused with a count of %d, want %d", n, limit)
			}
			return ok
		})
	})
	t.Run("AdmitTurn", func(t *testing.T) {
		run(t, func(u *coachd.User) bool {
			s := mustSession(t, b, u)
			adm := admission(s, "B", clockB.Now().Add(time.Minute), 10)
			adm.Message = &coachd.Message{Role: coachd.RoleUser, Content: "hi"}
			adm.Limits = []coachd.LimitHit{hit(clockB)}
			_, err := b.AdmitTurn(ctx, adm)
			if err != nil && !errors.Is(err, coachd.ErrLimitReached) {
				t.Fatal(err)
			}
			return err == nil
		})
	})
	t.Run("Window", func(t *testing.T) {
		// The window is the one time.Truncate gives on the database's
		// clock, of any length (7 s is not a divisor of the Unix epoch's
		// distance from Go's zero time), so a caller's Retry-After holds.
		const per = 7 * time.Second
		for range 3 {
			u := budgetUser(t, a, 1000)
			before := time.Now().Truncate(per)
			if _, ok, err := a.HitLimit(ctx, u.ID, coachd.LimitHit{Key: "w", Window: before, Per: per, Limit: 1}); err != nil || !ok {
				t.Fatalf("refused: %v", err)
			}
			if !time.Now().Truncate(per).Equal(before) {
				continue
			}
			var got time.Time
			if err := a.SQL().QueryRowContext(ctx, a.Rebind(`SELECT window_start FROM limit_windows WHERE user_id = ?`), u.ID).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if !got.Equal(before) {
				t.Fatalf("window began at %v, want %v", got.UTC(), before.UTC())
			}
			return
		}
		t.Fatal("the window ended during each of 3 runs")
	})
}

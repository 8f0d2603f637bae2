package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore"
)

// TestSweepLimits proves that SweepLimits deletes a limit window only once
// it has ended, which it knows by a later window of the same user and
// key: the running window stays however long ago it began (a weekly rate,
// a month's messages), a later window of another key or another user
// ends nothing, and a window begun at or after before stays.
func TestSweepLimits(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { testSweepLimits(t, b.newDSN) })
	}
}

func testSweepLimits(t *testing.T, newDSN func(tb testing.TB) string) {
	ctx := context.Background()
	clock := newClock()
	db := MustOpen(t, newDSN(t), clock)
	now := clock.Now()
	week := now.Truncate(7 * 24 * time.Hour)
	month := coachd.PeriodMonthly.Start(now)
	u, v := budgetUser(t, db, 1000), budgetUser(t, db, 1000)

	// Each window is counted to its limit of 1, so a second hit is
	// refused while its count is there and allowed once it was swept.
	fill := func(userID, key string, window time.Time) {
		t.Helper()
		if _, ok, err := db.HitLimit(ctx, userID, coachd.LimitHit{Key: key, Window: window, Limit: 1}); err != nil || !ok {
			t.Fatalf("count %s %s: %v, allowed %v", key, window, err, ok)
		}
	}
	fill(u.ID, "rate", week.Add(-7*24*time.Hour)) // ended: the next week was counted
	fill(u.ID, "rate", week)                      // running, begun days ago
	fill(u.ID, "messages", month.AddDate(0, -1, 0))
	fill(u.ID, "messages", month)
	fill(v.ID, "rate", week.Add(-7*24*time.Hour)) // v's latest: u's and other keys' later windows do not end it
	fill(u.ID, "tool_rate", now.Add(time.Hour))   // ended, but begun after before
	fill(u.ID, "tool_rate", now.Add(2*time.Hour))

	if err := db.SweepLimits(ctx, now); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name        string
		userID, key string
		window      time.Time
		kept        bool
	}{
		{"EndedRate", u.ID, "rate", week.Add(-7 * 24 * time.Hour), false},
		{"RunningRate", u.ID, "rate", week, true},
		{"EndedMonth", u.ID, "messages", month.AddDate(0, -1, 0), false},
		{"RunningMonth", u.ID, "messages", month, true},
		{"OtherUser", v.ID, "rate", week.Add(-7 * 24 * time.Hour), true},
		{"AfterBefore", u.ID, "tool_rate", now.Add(time.Hour), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mustKept(t, db, tc.userID, tc.key, tc.window); got != tc.kept {
				t.Errorf("window kept = %v, want %v", got, tc.kept)
			}
		})
	}
}

// mustKept reports whether the window's count of 1 is still there: a hit
// with a limit of 1 is refused then (and changes nothing).
func mustKept(tb testing.TB, db *sqlstore.DB, userID, key string, window time.Time) bool {
	tb.Helper()
	_, ok, err := db.HitLimit(context.Background(), userID, coachd.LimitHit{Key: key, Window: window, Limit: 1})
	if err != nil {
		tb.Fatal(err)
	}
	return !ok
}

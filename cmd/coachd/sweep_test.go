package main

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore"
)

// TestSweeperKeepsRunningRateWindow proves that the sweeper leaves the
// running window of a rate limit longer than a day alone, so a weekly cap
// holds through sweeps, whether it is the server's (--rate-limit) or a
// user's own. The window chosen began before the last day of the previous
// month, which the sweeper used to delete every window older than: the
// count went and the cap was lifted every sweep.
func TestSweeperKeepsRunningRateWindow(t *testing.T) {
	now := time.Now().UTC()
	oldCutoff := coachd.PeriodMonthly.Start(now).AddDate(0, 0, -1)
	// The shortest whole-day window of at least a week whose current
	// start is before that cutoff: a week on the first days of most
	// months, longer later in the month.
	per := 168 * time.Hour
	for !now.Truncate(per).Before(oldCutoff) {
		per += 24 * time.Hour
	}
	rate := fmt.Sprintf("2/%s", per)
	t.Logf("rate window %s started %s", per, now.Truncate(per).Format(time.RFC3339))

	for _, tc := range []struct {
		name       string
		serverRate string
		userRate   string
	}{
		{"ServerRate", rate, ""},
		{"UserOverride", "20/60s", rate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "coachd.db")
			p := MustServe(t, map[string]string{"COACHD_ADDR": "127.0.0.1:0"},
				"--db", db, "--admin-key", testAdminKey, "--provider", "demo",
				"--rate-limit", tc.serverRate,
				"--reservation-expiry", "200ms") // the sweeper runs every 50 ms
			id, key := mustAPIUser(t, p.url, `{"name":"weekly"}`)
			if tc.userRate != "" {
				if st := call(t, "PATCH", p.url+"/v1/users/"+id, testAdminKey, fmt.Sprintf(`{"rate_limit":%q}`, tc.userRate), nil, nil); st != 200 {
					t.Fatalf("set the user's rate limit: status %d", st)
				}
			}
			preflight := func() int {
				return call(t, "POST", p.url+"/v1/chat/preflight", key, `{"message":"hi"}`, nil, nil)
			}
			for i := 0; i < 2; i++ {
				if st := preflight(); st != 200 {
					t.Fatalf("preflight %d: status %d, want 200", i+1, st)
				}
			}
			if st := preflight(); st != 429 {
				t.Fatalf("third preflight in the window: status %d, want 429", st)
			}
			MustSweep(t, mustOpen(t, db), id, per)
			if st := preflight(); st != 429 {
				t.Fatalf("after a sweep, a fourth preflight in the same %s window: status %d, want 429 (the sweeper deleted the running window's count)", per, st)
			}
		})
	}
}

// MustSweep returns once the sweeper has swept the limit windows since
// it was called. It counts, under a probe key of its own, the user's
// windows of length per two and one before the running one (the later
// ends the earlier), and waits until the earlier count is gone: the
// sweeper deleted it, in a sweep that began after the call.
func MustSweep(t *testing.T, store *sqlstore.DB, userID string, per time.Duration) {
	t.Helper()
	ctx := context.Background()
	ended := time.Now().Truncate(per).Add(-2 * per)
	for _, w := range []time.Time{ended.Add(per), ended} {
		if _, ok, err := store.HitLimit(ctx, userID, coachd.LimitHit{Key: "sweep_probe", Window: w, Limit: 1}); err != nil || !ok {
			t.Fatalf("count in the ended window %s: %v, allowed %v", w, err, ok)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		// With a limit of 1, a count still there refuses and changes
		// nothing; a count swept away is counted anew.
		_, ok, err := store.HitLimit(ctx, userID, coachd.LimitHit{Key: "sweep_probe", Window: ended, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the sweeper did not delete an ended window in 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

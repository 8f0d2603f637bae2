package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

// TestReleaseLimit proves that ReleaseLimit gives back one counted event
// of the window it was counted in: the count goes down by one (another
// event fits), never below zero (a release too many lets no more in than
// the limit), and a release that names the window before (by its Window
// on SQLite, by how long ago on Postgres, whose windows follow the
// database's clock) leaves the current one as it is.
func TestReleaseLimit(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			clock := newClock()
			db := MustOpen(t, b.newDSN(t), clock)
			u := budgetUser(t, db, 1000)
			const per, limit = 24 * time.Hour, 2
			h := coachd.LimitHit{Key: "tts_rate/24h0m0s", Window: clock.Now().Truncate(per), Per: per, Limit: limit}
			hit := func(want bool) {
				t.Helper()
				if _, ok, err := db.HitLimit(ctx, u.ID, h); err != nil || ok != want {
					t.Fatalf("HitLimit = %v, %v; want allowed %v", ok, err, want)
				}
			}
			release := func(h coachd.LimitHit, ago time.Duration) {
				t.Helper()
				if err := db.ReleaseLimit(ctx, u.ID, h, ago); err != nil {
					t.Fatal(err)
				}
			}
			hit(true)
			hit(true)
			hit(false)
			before := h
			before.Window = h.Window.Add(-per)
			release(before, per)
			hit(false)
			release(h, 0)
			hit(true)
			hit(false)
			for range 4 {
				release(h, 0)
			}
			hit(true)
			hit(true)
			hit(false)
			// Another user's window is not theirs to release.
			v := budgetUser(t, db, 1000)
			if err := db.ReleaseLimit(ctx, v.ID, h, 0); err != nil {
				t.Fatal(err)
			}
			hit(false)
		})
	}
}

package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

// TestHoldLasts: a reservation asked to last longer than the store's
// expiry (a turn's max duration, ReserveRequest.Lasts) is not released
// before, by the sweeper or a charge moving its expiry on; past it, it
// is.
func TestHoldLasts(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			clock := newClock()
			db := MustOpen(t, b.newDSN(t), clock)
			db.SetBudgetConfig(coachd.BudgetConfig{TTL: 5 * time.Minute})
			u := budgetUser(t, db, 1000)
			r := must[*coachd.Reservation](t)(db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, Estimate: 300, Lasts: 15 * time.Minute}))
			passTime(t, db, clock, time.Minute)
			must[*coachd.Reservation](t)(db.Charge(ctx, u.ID, r.ID, 100)) // would expire at 6m
			passTime(t, db, clock, 9*time.Minute)
			must[int](t)(db.ExpireReservations(ctx))
			mustStatus(t, db, u.ID, 100, 200)
			passTime(t, db, clock, 6*time.Minute)
			must[int](t)(db.ExpireReservations(ctx))
			mustStatus(t, db, u.ID, 100, 0)
		})
	}
}

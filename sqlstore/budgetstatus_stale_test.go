package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

// TestBudgetStatusStaleHold: a hold past its expiry that no sweep or
// reservation released yet is not shown as held. BudgetStatus (GET
// /v1/me's budget, the voice door's budget check) counted it until the
// sweeper came by (up to 30 s later), and said the tokens a preflight
// would have admitted a turn for were held: the voice door refused a
// session that a turn was allowed.
func TestBudgetStatusStaleHold(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			clock := newClock()
			db := MustOpen(t, b.newDSN(t), clock)
			db.SetBudgetConfig(coachd.BudgetConfig{TTL: coachd.DefaultReservationTTL})
			u := budgetUser(t, db, 500)
			stale := must[*coachd.Reservation](t)(db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, Agent: "coach", Estimate: 400}))
			must[*coachd.Reservation](t)(db.Charge(ctx, u.ID, stale.ID, 100))
			live := must[*coachd.Reservation](t)(db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, Agent: "coach", Estimate: 50, Lasts: time.Hour}))
			mustStatus(t, db, u.ID, 100, 350)
			passTime(t, db, clock, coachd.DefaultReservationTTL+time.Second)

			st := must[*coachd.BudgetStatus](t)(db.BudgetStatus(ctx, u.ID))
			if st.TokensUsed != 100 || st.TokensReserved != 50 || st.Remaining != 350 {
				t.Fatalf("status with a stale hold: used %d, reserved %d, remaining %d; want 100, 50 (the live hold), 350",
					st.TokensUsed, st.TokensReserved, st.Remaining)
			}
			// What a reservation finds, the stale hold released.
			must[*coachd.Reservation](t)(db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, Agent: "coach", Estimate: 350}))
			mustStatus(t, db, u.ID, 100, 400)
			must[*coachd.Reservation](t)(db.Finalize(ctx, u.ID, live.ID, 0))
			MustLedgerOK(t, db)
		})
	}
}

package sqlstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

// TestRecordLapsedHoldUSD: with --budget-unit usd, the record that
// could not hold a lapsed turn again said "200 tokens remain and the
// rest of the turn needs about 300" of micro-dollars; seed 000's route
// and an SDK client show that message. It says dollars.
func TestRecordLapsedHoldUSD(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			clock := newClock()
			db := MustOpen(t, b.newDSN(t), clock)
			db.SetBudgetConfig(coachd.BudgetConfig{TTL: coachd.DefaultReservationTTL, Unit: coachd.UnitMicroUSD})
			u := budgetUser(t, db, 1000)
			first, next := mustSession(t, db, u), mustSession(t, db, u)
			r := must[*coachd.Reservation](t)(db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, SessionID: first.ID, Agent: "coach", Estimate: 600, Supersede: true}))
			must[*coachd.Reservation](t)(db.Record(ctx, u.ID, toolRound(first.ID, r.ID, 1, 100, "how do I rank up?")))
			passTime(t, db, clock, coachd.RoundHoldTTL+30*time.Second)
			must[*coachd.Reservation](t)(db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, SessionID: next.ID, Agent: "coach", Estimate: 800, Supersede: true}))
			_, err := db.Record(ctx, u.ID, toolRound(first.ID, r.ID, 2, 300, ""))
			wantCode(t, err, coachd.EBUDGET)
			if msg := err.Error(); strings.Contains(msg, "tokens") || !strings.Contains(msg, "$0.0003") {
				t.Errorf("record's refusal %q, want it in dollars (the rest of the turn: $0.0003)", msg)
			}
		})
	}
}

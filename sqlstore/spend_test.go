package sqlstore_test

import (
	"context"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore"
)

// TestSettleSpend: a budget in billed units charges the amount and keeps
// the raw tokens beside it, cumulatively, on both dialects; the ledger
// labels its rows with the unit, /v1/me's status sums both, and the
// ledger still balances.
func TestSettleSpend(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db := MustOpen(t, b.newDSN(t), newClock())
			db.SetBudgetConfig(coachd.BudgetConfig{Unit: coachd.UnitMicroUSD})
			u := budgetUser(t, db, 5_000_000) // $5
			r := must[*coachd.Reservation](t)(db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, Estimate: 100_000}))
			must[*coachd.Reservation](t)(db.Settle(ctx, u.ID, r.ID, coachd.Spend{Amount: 30_000, Tokens: 9_000}, coachd.SettleCharge))
			r = must[*coachd.Reservation](t)(db.Settle(ctx, u.ID, r.ID, coachd.Spend{Amount: 45_000, Tokens: 12_000}, coachd.SettleFinalize))
			if r.Charged != 45_000 || r.ChargedRaw != 12_000 || r.State != coachd.ReservationFinalized {
				t.Fatalf("reservation %+v", r)
			}
			// A repeat changes nothing.
			must[*coachd.Reservation](t)(db.Settle(ctx, u.ID, r.ID, coachd.Spend{Amount: 45_000, Tokens: 12_000}, coachd.SettleFinalize))
			var used, raw int64
			for _, e := range must[[]coachd.LedgerEntry](t)(db.Ledger(ctx, u.ID)) {
				used, raw = used+e.Used, raw+e.RawTokens
				if e.Unit != coachd.UnitMicroUSD {
					t.Errorf("ledger row %+v not in usd", e)
				}
			}
			if used != 45_000 || raw != 12_000 {
				t.Errorf("ledger used %d raw %d, want 45000 and 12000", used, raw)
			}
			st := must[*coachd.BudgetStatus](t)(db.BudgetStatus(ctx, u.ID))
			if st.TokensUsed != 45_000 || st.RawTokensUsed != 12_000 || st.UsedUSD == nil || *st.UsedUSD != 0.045 || *st.BudgetUSD != 5 {
				t.Errorf("status %+v", st)
			}
			if _, err := db.Settle(ctx, u.ID, r.ID, coachd.Spend{Amount: 1, Tokens: -1}, coachd.SettleCharge); coachd.ErrorCode(err) != coachd.EINVALID {
				t.Errorf("negative raw tokens: %v", err)
			}
			MustLedgerOK(t, db)
		})
	}
}

var _ coachd.BudgetService = (*sqlstore.DB)(nil)

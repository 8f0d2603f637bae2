package sqlstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

// TestSettleRacingItself: settlements of one reservation racing each
// other (a client's retry while the first is still running, the turn's
// own charge) apply the cumulative amount once. Each takes the user's lock
// and must then read the reservation as the one before it left it: a
// settlement that read it as it was before waiting for the lock would
// charge the difference again.
func TestSettleRacingItself(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			db := MustOpen(t, b.newDSN(t), coachd.SystemClock{})
			db.SetBudgetConfig(coachd.BudgetConfig{TTL: time.Hour})
			for trial := range 5 {
				u := budgetUser(t, db, 100_000)
				r, err := db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, Estimate: 1000})
				if err != nil {
					t.Fatal(err)
				}
				const racers = 8
				var wg sync.WaitGroup
				gate := make(chan struct{})
				for i := range racers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-gate
						spent := int64(300)
						if i%2 == 1 {
							spent = 500 // a later, larger charge
						}
						if _, err := db.Settle(ctx, u.ID, r.ID, coachd.Spend{Amount: spent, Tokens: spent}, coachd.SettleCharge); err != nil {
							t.Errorf("settle: %v", err)
						}
					}()
				}
				close(gate)
				wg.Wait()
				if _, err := db.Settle(ctx, u.ID, r.ID, coachd.Spend{Amount: 500, Tokens: 500}, coachd.SettleFinalize); err != nil {
					t.Fatal(err)
				}
				st, err := db.BudgetStatus(ctx, u.ID)
				if err != nil {
					t.Fatal(err)
				}
				if st.TokensUsed != 500 || st.TokensReserved != 0 {
					t.Fatalf("trial %d: used %d, reserved %d after racing charges of 300 and 500 and a finalize at 500; want 500 and 0",
						trial, st.TokensUsed, st.TokensReserved)
				}
			}
		})
	}
}

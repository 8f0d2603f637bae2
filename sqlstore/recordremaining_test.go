package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

// TestSettleRemainingStaleHold: the budget_remaining a record, an abort
// or a turn's settlement answers is what GET /v1/me says at that instant,
// also while another turn of the user holds a hold past its expiry that
// nothing released yet (no sweep, no reservation since). BudgetStatus
// leaves such a hold out (the next reservation releases it before it
// checks the budget); a settlement counted it from the stored total, so
// seed 000's record answered 650 where /v1/me said 950.
func TestSettleRemainingStaleHold(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			clock := newClock()
			db := MustOpen(t, b.newDSN(t), clock)
			db.SetBudgetConfig(coachd.BudgetConfig{TTL: coachd.DefaultReservationTTL})
			u := budgetUser(t, db, 1000)
			gone, live := mustSession(t, db, u), mustSession(t, db, u)
			// A turn whose app went away without a word: its hold runs out.
			must[*coachd.Reservation](t)(db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, SessionID: gone.ID, Agent: "coach", Estimate: 300}))
			passTime(t, db, clock, coachd.DefaultReservationTTL-time.Minute)
			reserve := func() *coachd.Reservation {
				t.Helper()
				return must[*coachd.Reservation](t)(db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, SessionID: live.ID, Agent: "coach", Estimate: 100}))
			}
			first, second, third := reserve(), reserve(), reserve()
			passTime(t, db, clock, time.Minute+time.Second) // the first turn's hold is stale, the others' are not

			agrees := func(t *testing.T, what string, got *coachd.Reservation) {
				t.Helper()
				st := must[*coachd.BudgetStatus](t)(db.BudgetStatus(ctx, u.ID))
				if got.Remaining != st.Remaining {
					t.Fatalf("%s: budget_remaining %d, GET /v1/me's remaining %d (%+v)", what, got.Remaining, st.Remaining, st)
				}
			}
			record := func(r *coachd.Reservation, used int64, final, abort bool) *coachd.Reservation {
				t.Helper()
				return must[*coachd.Reservation](t)(db.Record(ctx, u.ID, coachd.TurnRecord{
					SessionID: live.ID, ReservationID: r.ID, TokensUsed: used, Final: final, Abort: abort,
					Messages: []*coachd.Message{{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("ok")}}},
				}))
			}
			t.Run("RecordRound", func(t *testing.T) { agrees(t, "record of a round", record(first, 40, false, false)) })
			t.Run("RecordFinal", func(t *testing.T) { agrees(t, "final record", record(first, 50, true, false)) })
			t.Run("RecordAgain", func(t *testing.T) { agrees(t, "the same record again", record(first, 50, true, false)) })
			t.Run("Abort", func(t *testing.T) { agrees(t, "abort", record(second, 20, false, true)) })
			t.Run("Settle", func(t *testing.T) {
				agrees(t, "a turn's settlement", must[*coachd.Reservation](t)(db.Finalize(ctx, u.ID, third.ID, 30)))
			})
			t.Run("Find", func(t *testing.T) {
				agrees(t, "FindReservation", must[*coachd.Reservation](t)(db.FindReservation(ctx, u.ID, third.ID)))
			})
			MustLedgerOK(t, db)
		})
	}
}

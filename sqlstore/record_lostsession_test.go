package sqlstore_test

import (
	"context"
	"testing"

	"github.com/coachd/coachd"
)

// TestRecordSessionCannotTake: an external loop records a turn whose
// session can no longer take its messages (full, or deleted while the
// turn ran). The messages are refused (409, 404), but the tokens were
// spent: the reservation is still charged and settled, not left to
// expire charging nothing, and a retry charges nothing twice.
func TestRecordSessionCannotTake(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db := MustOpen(t, b.newDSN(t), newClock())
			db.SetBudgetConfig(coachd.BudgetConfig{})
			u := budgetUser(t, db, 1000)
			msgs := func() []*coachd.Message {
				return []*coachd.Message{{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("Here is your plan.")}}}
			}
			record := func(s *coachd.Session, r *coachd.Reservation, tokens int64, want string) {
				t.Helper()
				for range 2 { // the app's retry
					_, err := db.Record(ctx, u.ID, coachd.TurnRecord{SessionID: s.ID, ReservationID: r.ID, TokensUsed: tokens,
						Final: true, Messages: msgs(), IdempotencyKey: "k-" + r.ID, RequestHash: "h"})
					wantCode(t, err, want)
				}
			}

			full := MustCreateSession(t, db, u.ID)
			r := must[*coachd.Reservation](t)(db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, SessionID: full.ID, Estimate: 300}))
			if err := rawExec(t, db, `UPDATE sessions SET message_count = ? WHERE id = ?`, coachd.MaxMessagesPerSession, full.ID); err != nil {
				t.Fatal(err)
			}
			record(full, r, 250, coachd.ECONFLICT)
			mustStatus(t, db, u.ID, 250, 0)
			if got := must[*coachd.Reservation](t)(db.FindReservation(ctx, u.ID, r.ID)); got.State != coachd.ReservationFinalized || got.Charged != 250 {
				t.Fatalf("reservation of the full session: %s, charged %d; want finalized, 250", got.State, got.Charged)
			}

			gone := MustCreateSession(t, db, u.ID)
			r = must[*coachd.Reservation](t)(db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, SessionID: gone.ID, Estimate: 300}))
			if err := db.DeleteSession(ctx, u.ID, gone.ID); err != nil {
				t.Fatal(err)
			}
			record(gone, r, 100, coachd.ENOTFOUND)
			mustStatus(t, db, u.ID, 350, 0)
		})
	}
}

package sqlstore_test

import (
	"context"
	"testing"

	"github.com/coachd/coachd"
)

// TestFreePreviewNothingSpent: a free turn aborted before it spent
// anything (the model failed before answering, the turn was given up
// unrun) does not use up one of the agent's free preview turns; one
// that spent tokens, or is still running, does.
func TestFreePreviewNothingSpent(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db := MustOpen(t, b.newDSN(t), newClock())
			db.SetBudgetConfig(coachd.BudgetConfig{})
			u := budgetUser(t, db, 0)
			req := coachd.ReserveRequest{UserID: u.ID, Agent: "coach", Estimate: 100, FreePreviewTurns: 2}
			for range 3 { // failed before any token: given back each time
				r := must[*coachd.Reservation](t)(db.Reserve(ctx, req))
				if !r.FreePreview {
					t.Fatal("not free")
				}
				must[*coachd.Reservation](t)(db.Abort(ctx, u.ID, r.ID, 0))
			}
			spent := must[*coachd.Reservation](t)(db.Reserve(ctx, req))
			must[*coachd.Reservation](t)(db.Abort(ctx, u.ID, spent.ID, 40)) // cut off mid-reply: used
			running := must[*coachd.Reservation](t)(db.Reserve(ctx, req))
			if !running.FreePreview {
				t.Fatal("the second free turn is not free")
			}
			_, err := db.Reserve(ctx, req)
			wantCode(t, err, coachd.EBUDGET)
			mustStatus(t, db, u.ID, 0, 0)
		})
	}
}

// TestFreePreviewAbortAnswered: an external loop's abort of a free turn
// that may have been answered (coachd.TurnRecord.Answered: it did not
// say what it spent) uses the free turn up although it reports no
// tokens, and charges no one.
func TestFreePreviewAbortAnswered(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db := MustOpen(t, b.newDSN(t), newClock())
			u := budgetUser(t, db, 0)
			sess := MustCreateSession(t, db, u.ID)
			req := coachd.ReserveRequest{UserID: u.ID, SessionID: sess.ID, Agent: "coach", Estimate: 100, FreePreviewTurns: 1}
			r := must[*coachd.Reservation](t)(db.Reserve(ctx, req))
			if !r.FreePreview {
				t.Fatal("not free")
			}
			must[*coachd.Reservation](t)(db.Record(ctx, u.ID, coachd.TurnRecord{SessionID: sess.ID, ReservationID: r.ID, Abort: true, Answered: true}))
			_, err := db.Reserve(ctx, req)
			wantCode(t, err, coachd.EBUDGET)
			mustStatus(t, db, u.ID, 0, 0)
		})
	}
}

package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore"
)

// TestReserveSupersedes: an app's own loop that stops without a final
// record (seed 000 at MAX_STEPS) leaves its reservation open, charged
// with what its rounds recorded. Its session's next preflight
// (ReserveRequest.Supersede) settles it at that, in the reservation's
// transaction: the new turn is checked against the budget less what was
// spent, not beside a hold that would last until it expired.
func TestReserveSupersedes(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { testSupersede(t, b.newDSN) })
	}
}

func testSupersede(t *testing.T, newDSN func(tb testing.TB) string) {
	ctx := context.Background()
	setup := func(t *testing.T, budget int64) (*sqlstore.DB, *coachd.User, *coachd.Session) {
		db := MustOpen(t, newDSN(t), newClock())
		db.SetBudgetConfig(coachd.BudgetConfig{})
		u := budgetUser(t, db, budget)
		return db, u, MustCreateSession(t, db, u.ID)
	}
	preflight := func(db *sqlstore.DB, u *coachd.User, s *coachd.Session, est int64) (*coachd.Reservation, error) {
		return db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, SessionID: s.ID, Estimate: est, Supersede: true})
	}
	t.Run("OK", func(t *testing.T) {
		db, u, s := setup(t, 1000)
		other := MustCreateSession(t, db, u.ID)
		first := must[*coachd.Reservation](t)(preflight(db, u, s, 600))
		must[*coachd.Reservation](t)(db.Charge(ctx, u.ID, first.ID, 150)) // a tool round recorded, the turn going on
		elsewhere := must[*coachd.Reservation](t)(preflight(db, u, other, 100))
		must[*coachd.Reservation](t)(db.Charge(ctx, u.ID, elsewhere.ID, 50))
		// 150 + 450 held + 50 + 50 held: 300 left, and the next turn needs 600.
		next, err := preflight(db, u, s, 600)
		if err != nil {
			t.Fatalf("the session's next turn: %v", err)
		}
		mustStatus(t, db, u.ID, 200, 650)
		old := must[*coachd.Reservation](t)(db.FindReservation(ctx, u.ID, first.ID))
		if old.State != coachd.ReservationFinalized || old.Charged != 150 || old.Held != 0 {
			t.Fatalf("the open turn: %+v", old)
		}
		if e := must[*coachd.Reservation](t)(db.FindReservation(ctx, u.ID, elsewhere.ID)); e.State != coachd.ReservationActive || e.Held != 50 {
			t.Fatalf("another session's turn: %+v", e)
		}
		// A late record of the settled turn still charges what it adds.
		must[*coachd.Reservation](t)(db.Finalize(ctx, u.ID, first.ID, 180))
		mustStatus(t, db, u.ID, 230, 650)
		if next.State != coachd.ReservationActive {
			t.Fatalf("next: %+v", next)
		}
	})
	t.Run("EndsEvenRefused", func(t *testing.T) {
		// The next turn does not fit even so: the earlier one ended all
		// the same, its hold released.
		db, u, s := setup(t, 1000)
		first := must[*coachd.Reservation](t)(preflight(db, u, s, 600))
		must[*coachd.Reservation](t)(db.Charge(ctx, u.ID, first.ID, 150))
		_, err := preflight(db, u, s, 900)
		wantCode(t, err, coachd.EBUDGET)
		mustStatus(t, db, u.ID, 150, 0)
	})
	t.Run("NotAFreshHold", func(t *testing.T) {
		// Two preflights of one session racing at the edge: the one that
		// recorded nothing yet is not taken for left open.
		db, u, s := setup(t, 1000)
		must[*coachd.Reservation](t)(preflight(db, u, s, 600))
		_, err := preflight(db, u, s, 600)
		wantCode(t, err, coachd.EBUDGET)
		mustStatus(t, db, u.ID, 0, 600)
	})
	t.Run("NotUnderALease", func(t *testing.T) {
		// coachd's own turn on the session holds its lease: its hold is its.
		db, u, s := setup(t, 1000)
		first := must[*coachd.Reservation](t)(preflight(db, u, s, 600))
		must[*coachd.Reservation](t)(db.Charge(ctx, u.ID, first.ID, 150))
		if err := db.AcquireTurn(ctx, u.ID, s.ID, "owner-1", newClock().Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		_, err := preflight(db, u, s, 600)
		wantCode(t, err, coachd.EBUDGET)
		mustStatus(t, db, u.ID, 150, 450)
	})
	t.Run("OnlyWhenAsked", func(t *testing.T) {
		db, u, s := setup(t, 1000)
		first := must[*coachd.Reservation](t)(preflight(db, u, s, 600))
		must[*coachd.Reservation](t)(db.Charge(ctx, u.ID, first.ID, 150))
		_, err := db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, SessionID: s.ID, Estimate: 600})
		wantCode(t, err, coachd.EBUDGET)
		mustStatus(t, db, u.ID, 150, 450)
	})
}

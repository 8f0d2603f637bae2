package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore"
)

// TestRecordLapsedHold: an app's loop whose round ran longer than
// coachd.RoundHoldTTL finds, at its next record, that its hold ran out
// and was given to another turn of the user. That record still stores
// the round and charges it (the tokens were spent), but the loop may not
// go on spending with no hold beside the turn that took the room: when
// the budget has room for the rest of the turn's estimate, the record
// holds it again; when it has not, it answers budget_exhausted, so the
// loop stops. The record kept the turn going with nothing held, and its
// later rounds took the user past the budget beside the other turn's
// hold.
func TestRecordLapsedHold(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			// lapse has a turn of 600 record a round of 100, run its next
			// round past the round hold, and another session of the user
			// reserve other meanwhile; it returns the first turn's round
			// record (cumulative spend 300, the loop goes on).
			lapse := func(t *testing.T, budget, other int64) (*sqlstore.DB, *coachd.User, coachd.TurnRecord) {
				clock := newClock()
				db := MustOpen(t, b.newDSN(t), clock)
				db.SetBudgetConfig(coachd.BudgetConfig{TTL: coachd.DefaultReservationTTL})
				u := budgetUser(t, db, budget)
				first, next := mustSession(t, db, u), mustSession(t, db, u)
				r := must[*coachd.Reservation](t)(db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, SessionID: first.ID, Agent: "coach", Estimate: 600, Supersede: true}))
				must[*coachd.Reservation](t)(db.Record(ctx, u.ID, toolRound(first.ID, r.ID, 1, 100, "how do I rank up?")))
				passTime(t, db, clock, coachd.RoundHoldTTL+30*time.Second) // the model's next answer is long
				must[*coachd.Reservation](t)(db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, SessionID: next.ID, Agent: "coach", Estimate: other, Supersede: true}))
				mustStatus(t, db, u.ID, 100, other)
				return db, u, toolRound(first.ID, r.ID, 2, 300, "")
			}
			t.Run("ErrNoRoom", func(t *testing.T) {
				db, u, round := lapse(t, 1000, 800)
				_, err := db.Record(ctx, u.ID, round)
				wantCode(t, err, coachd.EBUDGET)
				mustStatus(t, db, u.ID, 300, 800) // charged, not held
				if n := messageCount(t, db, u, round.SessionID); n != 5 {
					t.Fatalf("%d messages stored, want the two rounds and the user's message (5)", n)
				}
				// The same record again (seed 000 sends no key: the same
				// body is its retry) is answered the same, stored once.
				_, err = db.Record(ctx, u.ID, round)
				wantCode(t, err, coachd.EBUDGET)
				if n := messageCount(t, db, u, round.SessionID); n != 5 {
					t.Fatalf("%d messages after the retry, want 5", n)
				}
				mustStatus(t, db, u.ID, 300, 800)
			})
			t.Run("HeldAgain", func(t *testing.T) {
				db, u, round := lapse(t, 2000, 800)
				got := must[*coachd.Reservation](t)(db.Record(ctx, u.ID, round))
				if got.State != coachd.ReservationActive || got.Held != 300 {
					t.Fatalf("record after the hold ran out: %s holding %d, want active holding the rest of the estimate (300)", got.State, got.Held)
				}
				mustStatus(t, db, u.ID, 300, 1100)
				st := must[*coachd.BudgetStatus](t)(db.BudgetStatus(ctx, u.ID))
				if got.Remaining != st.Remaining {
					t.Fatalf("budget_remaining %d, GET /v1/me's %d", got.Remaining, st.Remaining)
				}
				final := coachd.TurnRecord{SessionID: round.SessionID, ReservationID: round.ReservationID, TokensUsed: 450, Final: true,
					Messages: []*coachd.Message{{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("Diamond.")}}}}
				if got := must[*coachd.Reservation](t)(db.Record(ctx, u.ID, final)); got.State != coachd.ReservationFinalized {
					t.Fatalf("final record: %s", got.State)
				}
				mustStatus(t, db, u.ID, 450, 800)
			})
		})
	}
}

// messageCount is how many messages the user's session holds.
func messageCount(tb testing.TB, db *sqlstore.DB, u *coachd.User, sessionID string) int {
	tb.Helper()
	msgs, _, err := db.ListMessages(context.Background(), u.ID, sessionID, coachd.Page{Limit: 100})
	if err != nil {
		tb.Fatal(err)
	}
	return len(msgs)
}

// TestRecordLapsedHoldNewPeriod: a turn whose hold ran out as the
// budget period turned is held again against the new period's budget,
// not refused for the ended one's spend, which the user's row keeps
// until a reservation rolls it (none came since).
func TestRecordLapsedHoldNewPeriod(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			clock := newClock()
			db := MustOpen(t, b.newDSN(t), clock)
			db.SetBudgetConfig(coachd.BudgetConfig{Period: coachd.PeriodMonthly, TTL: coachd.DefaultReservationTTL})
			u := budgetUser(t, db, 1000)
			first, next := mustSession(t, db, u), mustSession(t, db, u)
			passTime(t, db, clock, time.Date(2026, 3, 31, 23, 50, 0, 0, time.UTC).Sub(clock.Now()))
			r := must[*coachd.Reservation](t)(db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, SessionID: first.ID, Agent: "coach", Estimate: 300, Supersede: true}))
			passTime(t, db, clock, 4*time.Minute)
			must[*coachd.Reservation](t)(db.Record(ctx, u.ID, toolRound(first.ID, r.ID, 1, 50, "how do I rank up?")))
			// The next round is long: its hold runs out, and another
			// session spends the rest of March's budget.
			passTime(t, db, clock, coachd.RoundHoldTTL+time.Minute)
			o := must[*coachd.Reservation](t)(db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, SessionID: next.ID, Agent: "coach", Estimate: 900}))
			must[*coachd.Reservation](t)(db.Finalize(ctx, u.ID, o.ID, 900))
			passTime(t, db, clock, 4*time.Minute) // 1 April, 00:01
			got := must[*coachd.Reservation](t)(db.Record(ctx, u.ID, toolRound(first.ID, r.ID, 2, 100, "")))
			if got.State != coachd.ReservationActive || got.Held != 200 {
				t.Fatalf("record in April: %s holding %d, want active holding 200", got.State, got.Held)
			}
			mustStatus(t, db, u.ID, 0, 200) // April's: the round is March's
		})
	}
}

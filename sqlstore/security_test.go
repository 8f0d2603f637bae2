package sqlstore_test

import (
	"context"
	"math"
	"testing"

	"github.com/coachd/coachd"
)

// maxTurnTokens is coachd.MaxTurnTokens, spelled out so that these tests
// also run against the code before the bound existed.
const maxTurnTokens = 100_000_000

// TestSecurityTokensSaturate is issue 20 finding 7 at the store: an
// estimate or a usage beyond coachd.MaxTurnTokens is held and charged at
// the bound, so no sum of token counts can overflow, every reservation
// still settles, and the ledger balances.
func TestSecurityTokensSaturate(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db := MustOpen(t, b.newDSN(t), newClock())
			u := budgetUser(t, db, math.MaxInt64) // the admin API accepts any non-negative budget
			sess := MustCreateSession(t, db, u.ID)
			small, err := db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, SessionID: sess.ID, Estimate: 100})
			if err != nil {
				t.Fatal(err)
			}
			huge, err := db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, SessionID: sess.ID, Estimate: math.MaxInt64})
			if err != nil {
				t.Fatalf("reserve 2^63-1 next to another hold: %v", err)
			}
			if huge.Estimate != maxTurnTokens || huge.Held != maxTurnTokens {
				t.Fatalf("huge hold %+v, want %d", huge, maxTurnTokens)
			}
			mustStatus(t, db, u.ID, 0, 100+maxTurnTokens)

			r, err := db.Finalize(ctx, u.ID, huge.ID, math.MaxInt64)
			if err != nil || r.Charged != maxTurnTokens || r.State != coachd.ReservationFinalized {
				t.Fatalf("finalize 2^63-1: %+v %v", r, err)
			}
			r, err = db.Record(ctx, u.ID, coachd.TurnRecord{SessionID: sess.ID, ReservationID: small.ID, TokensUsed: math.MaxInt64, Final: true})
			if err != nil || r.Charged != maxTurnTokens {
				t.Fatalf("record 2^63-1: %+v %v", r, err)
			}
			mustStatus(t, db, u.ID, 2*maxTurnTokens, 0)

			// More turns keep working: nothing overflowed.
			next, err := db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, SessionID: sess.ID, Estimate: 100})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Abort(ctx, u.ID, next.ID, math.MaxInt64); err != nil {
				t.Fatal(err)
			}
			mustStatus(t, db, u.ID, 3*maxTurnTokens, 0)
		})
	}
}

// TestSecurityOverflowedTotals is issue 20 finding 7 for accounts whose
// totals overflowed before the bound existed: they read as an exhausted
// budget (402), never as a huge one and never as a 500.
func TestSecurityOverflowedTotals(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db := MustOpen(t, b.newDSN(t), newClock())
			u := budgetUser(t, db, 0)
			sess := MustCreateSession(t, db, u.ID)
			if err := rawExec(t, db, `UPDATE users SET tokens_used = ?, tokens_reserved = 5 WHERE id = ?`, int64(math.MaxInt64), u.ID); err != nil {
				t.Fatal(err)
			}
			st, err := db.BudgetStatus(ctx, u.ID)
			if err != nil || st.Remaining != 0 {
				t.Fatalf("remaining %+v %v, want 0", st, err)
			}
			if err := rawExec(t, db, `UPDATE users SET token_budget = 1000 WHERE id = ?`, u.ID); err != nil {
				t.Fatal(err)
			}
			_, err = db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, SessionID: sess.ID, Estimate: 100})
			wantCode(t, err, coachd.EBUDGET)
		})
	}
}

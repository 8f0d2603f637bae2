package server_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/server"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

// TestSeed000MaxStepsNewConversation: seed 000's route.ts records every
// tool round (lines 650-661) and at MAX_STEPS closes with no final
// record and no abort (lines 667-668). The player's next message may
// open a new conversation (no session_id), which does not supersede the
// stopped turn as a preflight in its session does
// (TestSeed000MaxStepsNextTurn). Right after the last record the loop
// cannot be told from one still running, so the new conversation is
// refused beside its hold (TestRecordToolRoundKeepsHold); but the hold
// lasts one round (coachd.RoundHoldTTL) past that record, not the five
// minutes of the store's expiry that a tight budget refused the player
// for. sqlstore's TestRecordRoundHold lets the time pass.
func TestSeed000MaxStepsNewConversation(t *testing.T) {
	for name, dsn := range map[string]func(t testing.TB) string{
		"sqlite":   func(t testing.TB) string { return filepath.Join(t.TempDir(), "coachd.db") },
		"postgres": pgtest.NewDatabase,
	} {
		t.Run(name, func(t *testing.T) {
			e := mustChatEnvDepsOn(t, dsn(t), func(d *server.Deps) { d.Limits = server.Limits{} }, nil)
			const maxSteps = 3
			pf := seed000Preflight(t, e, "how do I rank up?")
			est := pf.EstimatedTokens
			spent := est / 4
			budget := spent + est + est/2 // the next turn fits once the hold is gone
			if _, err := e.db.UpdateUser(context.Background(), e.alice.ID, coachd.UserUpdate{TokenBudget: &budget}); err != nil {
				t.Fatal(err)
			}
			last := seed000MaxSteps(t, e, pf, "how do I rank up?", maxSteps, spent)
			// MAX_STEPS: nothing more reaches coachd.
			if r := e.post(e.alice.key, "/v1/chat/preflight", `{"message":"new question"}`, nil, nil); !budgetRefused(r) {
				t.Fatalf("a new conversation right after the last record: %d %s, want refused", r.status, r.body)
			}
			held, err := e.db.FindReservation(context.Background(), e.alice.ID, pf.ReservationID)
			if err != nil {
				t.Fatal(err)
			}
			// A bound on the stored expiry, not on how long anything took:
			// one round after the last record, where the whole expiry was
			// 5 minutes after it.
			if held.State != coachd.ReservationActive || held.Charged != spent || held.ExpiresAt.After(last.Add(coachd.RoundHoldTTL+time.Second)) {
				t.Fatalf("the stopped loop's hold: %s, charged %d, expires %v after its last record; want active, %d, within %v",
					held.State, held.Charged, held.ExpiresAt.Sub(last), spent, coachd.RoundHoldTTL)
			}
			if drift, err := e.db.CheckLedger(context.Background()); err != nil || len(drift) > 0 {
				t.Fatalf("ledger: %+v %v", drift, err)
			}
		})
	}
}

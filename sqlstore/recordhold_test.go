package sqlstore_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

// TestRecordRoundHold: the hold that a record of a tool round keeps open
// (the app's loop goes on) lasts coachd.RoundHoldTTL from that record,
// not the store's whole expiry. Seed 000's route stops at MAX_STEPS right
// after such a record, with no final record and no abort: its hold held
// the budget for the five minutes of the expiry, and the player's next
// conversation (a new session, which does not supersede it) was refused
// all that time. A loop still running records again within a round, so
// until then a second turn stays refused beside it; past it, the hold
// goes back, and a late record still charges what the turn spent.
func TestRecordRoundHold(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			clock := newClock()
			db := MustOpen(t, b.newDSN(t), clock)
			db.SetBudgetConfig(coachd.BudgetConfig{TTL: coachd.DefaultReservationTTL})
			u := budgetUser(t, db, 1000)
			first, next := mustSession(t, db, u), mustSession(t, db, u)
			reserve := func(s *coachd.Session) (*coachd.Reservation, error) {
				return db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, SessionID: s.ID, Agent: "coach", Estimate: 600, Supersede: true})
			}
			r := must[*coachd.Reservation](t)(reserve(first))
			toolUse := coachd.Block{Type: coachd.BlockToolUse, ID: "toolu_1", Name: "get_rank", Input: json.RawMessage(`{}`)}
			round := coachd.TurnRecord{SessionID: first.ID, ReservationID: r.ID, TokensUsed: 100, Messages: []*coachd.Message{
				{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("how do I rank up?")}},
				{Role: coachd.RoleAssistant, Blocks: []coachd.Block{toolUse}},
				{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.ToolResultBlock("toolu_1", `{"rank":"diamond"}`, false)}},
			}}
			if got := must[*coachd.Reservation](t)(db.Record(ctx, u.ID, round)); got.State != coachd.ReservationActive {
				t.Fatalf("record of a tool round: %s, want the hold kept", got.State)
			}
			mustStatus(t, db, u.ID, 100, 500)

			// The loop may still run: a new conversation does not fit.
			passTime(t, db, clock, coachd.RoundHoldTTL/2)
			_, err := reserve(next)
			wantCode(t, err, coachd.EBUDGET)
			mustStatus(t, db, u.ID, 100, 500)

			// No record came within a round: the loop stopped.
			passTime(t, db, clock, coachd.RoundHoldTTL/2+time.Second)
			if _, err := reserve(next); err != nil {
				t.Fatalf("the next conversation, %v after the stopped loop's last record: %v", coachd.RoundHoldTTL+time.Second, err)
			}
			mustStatus(t, db, u.ID, 100, 600)
			if got := must[*coachd.Reservation](t)(db.FindReservation(ctx, u.ID, r.ID)); got.State != coachd.ReservationExpired || got.Charged != 100 {
				t.Fatalf("the stopped loop's reservation: %+v", got)
			}

			// A late final record of that turn still charges what it adds.
			final := coachd.TurnRecord{SessionID: first.ID, ReservationID: r.ID, TokensUsed: 150, Final: true, Messages: []*coachd.Message{
				{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("Diamond.")}},
			}}
			must[*coachd.Reservation](t)(db.Record(ctx, u.ID, final))
			mustStatus(t, db, u.ID, 150, 600)
			MustLedgerOK(t, db)
		})
	}
}

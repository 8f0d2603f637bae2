package sqlstore_test

import (
	"context"
	"encoding/json"
	"fmt"
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

// TestSettleRemainingNewPeriod: a turn reserved in a budget period that
// ended while it ran settles in the new one (its usage charged to the
// period it was reserved in): the budget_remaining it answers is the new
// period's, as GET /v1/me says (TestMeNewPeriod), not what the ended
// period had left, which the user's row keeps until the next reservation
// rolls it.
func TestSettleRemainingNewPeriod(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			clock := newClock() // 1 March, noon
			db := MustOpen(t, b.newDSN(t), clock)
			db.SetBudgetConfig(coachd.BudgetConfig{Period: coachd.PeriodMonthly, TTL: coachd.DefaultReservationTTL})
			u := budgetUser(t, db, 1000)
			s := mustSession(t, db, u)
			spent := must[*coachd.Reservation](t)(db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, SessionID: s.ID, Agent: "coach", Estimate: 100}))
			must[*coachd.Reservation](t)(db.Finalize(ctx, u.ID, spent.ID, 700))
			end := time.Date(2026, 3, 31, 23, 59, 0, 0, time.UTC)
			passTime(t, db, clock, end.Sub(clock.Now()))
			r := must[*coachd.Reservation](t)(db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, SessionID: s.ID, Agent: "coach", Estimate: 200}))
			passTime(t, db, clock, 2*time.Minute) // 1 April: the turn still runs
			for _, step := range []struct {
				name string
				do   func() (*coachd.Reservation, error)
			}{
				{"Record", func() (*coachd.Reservation, error) {
					return db.Record(ctx, u.ID, toolRound(s.ID, r.ID, 1, 50, "how do I rank up?"))
				}},
				{"Finalize", func() (*coachd.Reservation, error) { return db.Finalize(ctx, u.ID, r.ID, 120) }},
			} {
				got := must[*coachd.Reservation](t)(step.do())
				st := must[*coachd.BudgetStatus](t)(db.BudgetStatus(ctx, u.ID))
				if got.Remaining != st.Remaining {
					t.Fatalf("%s in the new period: budget_remaining %d, GET /v1/me's remaining %d (%+v)", step.name, got.Remaining, st.Remaining, st)
				}
			}
			MustLedgerOK(t, db)
		})
	}
}

// toolRound is the record of round n of a turn of an app's own loop: the
// model's tool call and its result (after the user's words, in the first).
func toolRound(sessionID, reservationID string, n int, used int64, words string) coachd.TurnRecord {
	id := fmt.Sprintf("toolu_%d", n)
	var msgs []*coachd.Message
	if words != "" {
		msgs = append(msgs, &coachd.Message{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock(words)}})
	}
	msgs = append(msgs,
		&coachd.Message{Role: coachd.RoleAssistant, Blocks: []coachd.Block{{Type: coachd.BlockToolUse, ID: id, Name: "get_rank", Input: json.RawMessage(`{}`)}}},
		&coachd.Message{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.ToolResultBlock(id, `{"rank":"diamond"}`, false)}})
	return coachd.TurnRecord{SessionID: sessionID, ReservationID: reservationID, TokensUsed: used, Messages: msgs,
		IdempotencyKey: fmt.Sprintf("repeat %s %d", reservationID, n), RequestHash: fmt.Sprint(n)}
}

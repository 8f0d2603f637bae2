package sqlstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

// TestAdmitPGHold: on Postgres the admission's statement (admitPG) holds
// the budget only when it takes the turn, the user's budget needs nothing
// first (no stale hold, no new period) and the budget holds it; otherwise
// it writes no hold, reservation or ledger row. A turn it does not take
// is errUnfold. Each case runs in a transaction of its own, read inside
// it and rolled back.
func TestAdmitPGHold(t *testing.T) {
	db := openPostgres(t)
	ctx := context.Background()
	u, s, a := behindTurn(t, db) // a budget of 1,000
	a.Behind = false
	errRollBack := errors.New("roll back")
	try := func(name string, a coachd.TurnAdmission, estimate int64, wantTaken, wantHeld bool, wantState userBudgetState) {
		t.Helper()
		_, err := writeTx(ctx, db, func(tx *tx) (struct{}, error) {
			msgs := []*coachd.Message{a.Message}
			rows, err := encodeMessages(msgs)
			if err != nil {
				return struct{}{}, err
			}
			req := a.Reserve
			req.UserID, req.SessionID, req.Estimate = u.ID, s.ID, estimate
			hold := db.newReservation(tx, req)
			// The user's reserved tokens, reservations, their ledger rows
			// and those in the user's period, before and after.
			count := func() (c [4]int64) {
				t.Helper()
				if err := tx.queryRow(ctx, `SELECT tokens_reserved,
					(SELECT count(*) FROM reservations WHERE user_id = users.id),
					(SELECT count(*) FROM ledger WHERE user_id = users.id AND reason = 'reserve'),
					(SELECT count(*) FROM reservations r WHERE r.user_id = users.id AND r.period_start = users.period_start)
					FROM users WHERE id = ?`, u.ID).Scan(&c[0], &c[1], &c[2], &c[3]); err != nil {
					t.Fatal(err)
				}
				return c
			}
			before := count()
			p, err := db.admitPG(ctx, tx, a, nil, msgs, rows, messageIDs(msgs, tx.now), hold)
			taken, held := err == nil, p.held
			if err != nil && !errors.Is(err, errUnfold) {
				return struct{}{}, err
			}
			if taken != wantTaken || held != wantHeld {
				t.Errorf("%s: taken %v, held %v; want %v, %v", name, taken, held, wantTaken, wantHeld)
			}
			if taken && p.st != wantState {
				t.Errorf("%s: the budget's state %+v, want %+v", name, p.st, wantState)
			}
			after := count()
			want := before
			if held {
				want = [4]int64{before[0] + estimate, before[1] + 1, before[2] + 1, before[3] + 1}
				if hold.Remaining != u.TokenBudget-want[0] {
					t.Errorf("%s: held with %d tokens remaining, want %d", name, hold.Remaining, u.TokenBudget-want[0])
				}
			}
			if after != want {
				t.Errorf("%s: held %v; reserved, reservations, their ledger rows, in the period: %v before, %v after; want %v",
					name, held, before, after, want)
			}
			return struct{}{}, errRollBack
		})
		if !errors.Is(err, errRollBack) {
			t.Fatalf("%s: %v", name, err)
		}
	}
	moved := *s
	moved.MessageCount++ // the session moved on: the statement takes nothing
	b := a
	b.Seen = &moved
	none := userBudgetState{}
	try("a session moved on", b, 300, false, false, none)
	try("an estimate over the budget", a, 5000, true, false, none)
	try("an estimate the budget holds", a, 300, true, true, none)

	// A hold past its expiry: released first (reserve), so not folded.
	db.SetBudgetConfig(coachd.BudgetConfig{TTL: time.Millisecond})
	if _, err := db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, Agent: "coach", Estimate: 100}); err != nil {
		t.Fatal(err)
	}
	db.SetBudgetConfig(coachd.BudgetConfig{})
	if _, err := db.write.ExecContext(ctx, db.dialect.rebind(`UPDATE reservations SET expires_at = ? WHERE user_id = ?`),
		time.Now().Add(-time.Hour), u.ID); err != nil {
		t.Fatal(err)
	}
	try("a stale hold", a, 300, true, false, userBudgetState{stale: true})
}

// TestPostgresLocksUserFirst: the statements that take the user's lock
// with other rows (admitPG's, and insertMessages' for EndTurn) take it
// before the session's row, as every other write of the user orders
// them (lockUser): while another transaction holds the user's lock, the
// write waits without holding its session's row.
func TestPostgresLocksUserFirst(t *testing.T) {
	db := openPostgres(t)
	ctx := context.Background()
	u, s, a := behindTurn(t, db)
	a.Behind = false
	waitsForUser := func(name string, op func() error) {
		t.Helper()
		holder, err := db.write.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer holder.Rollback()
		if _, err := holder.ExecContext(ctx, `SELECT id FROM users WHERE id = $1 FOR UPDATE`, u.ID); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- op() }()
		for lockWaiters(t, db) == 0 {
			select {
			case err := <-done:
				t.Fatalf("%s ran while another transaction held its user's lock: %v", name, err)
			default:
			}
		}
		if _, err := holder.ExecContext(ctx, `SELECT id FROM sessions WHERE id = $1 FOR UPDATE NOWAIT`, s.ID); err != nil {
			t.Fatalf("%s, waiting for the user's lock, holds its session's row: %v", name, err)
		}
		if err := holder.Rollback(); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	var adm *coachd.Admission
	waitsForUser("the admission", func() (err error) {
		adm, err = db.AdmitTurn(ctx, a)
		return err
	})
	waitsForUser("the turn's end", func() error {
		reply := &coachd.Message{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("hi")}}
		_, _, err := db.EndTurn(ctx, u.ID, coachd.TurnEnd{SessionID: s.ID, Owner: a.Owner, Messages: []*coachd.Message{reply},
			ReservationID: adm.Reservation.ID, ReservationSeen: adm.Reservation, Spend: coachd.Spend{Amount: 10, Tokens: 10},
			Mode: coachd.SettleFinalize})
		return err
	})
}

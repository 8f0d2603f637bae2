package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/coachd/coachd"
)

// Record appends an external loop's messages to the session and settles
// the reservation with the turn's cumulative tokens, in one transaction.
// With an idempotency key, a repeat returns the first result and changes
// nothing; the same key with a different request is ECONFLICT. A session
// that cannot take the messages (not there, full) is that error, after
// the reservation is settled all the same: the tokens were spent.
func (db *DB) Record(ctx context.Context, userID string, rec coachd.TurnRecord) (*coachd.Reservation, error) {
	if rec.TokensUsed < 0 {
		return nil, coachd.Invalid(coachd.FieldError{Field: "tokens_used", Message: "must not be negative", Code: "range"})
	}
	if rec.Amount < 0 {
		return nil, coachd.Invalid(coachd.FieldError{Field: "tokens_used", Message: "must not be negative", Code: "range"})
	}
	if rec.Amount == 0 {
		rec.Amount = rec.TokensUsed
	}
	// As settle does.
	rec.TokensUsed, rec.Amount = min(rec.TokensUsed, coachd.MaxTurnTokens), min(rec.Amount, db.budget.Unit.MaxTurn())
	rows, err := encodeMessages(rec.Messages)
	if err != nil {
		return nil, err
	}
	mode := settleCharge
	switch {
	case rec.Abort:
		mode = settleAbort
	case rec.Final:
		mode = settleFinalize
	}
	// refused is the session's refusal of the messages (sessionRefused),
	// answered once the settlement is committed; lapsed the budget's
	// refusal to hold again a turn whose hold ran out (rehold).
	var refused, lapsed error
	// budgetTx locks the user first: a concurrent retry with the same key
	// waits there and then finds the key below.
	res, err := budgetTx(ctx, db, userID, func(tx *tx) (*coachd.Reservation, error) {
		refused, lapsed = nil, nil
		r, err := findReservation(ctx, tx, userID, rec.ReservationID)
		if err != nil {
			return nil, err
		}
		if r.SessionID != rec.SessionID {
			return nil, coachd.Errorf(coachd.ECONFLICT, "reservation %s belongs to another session", r.ID)
		}
		if rec.IdempotencyKey != "" {
			var hash, resp string
			err := tx.queryRow(ctx, `SELECT request_hash, response FROM idempotency_keys WHERE user_id = ? AND idem_key = ?`,
				userID, rec.IdempotencyKey).Scan(&hash, &resp)
			switch {
			case err == nil && hash != rec.RequestHash:
				return nil, coachd.Errorf(coachd.ECONFLICT, "Idempotency-Key was already used for a different request")
			case err == nil:
				prev := recordReply{Reservation: &coachd.Reservation{}}
				if err := json.Unmarshal([]byte(resp), &prev); err != nil {
					return nil, internal(err, "decode idempotent response")
				}
				if prev.Lapsed != "" {
					lapsed = lapsedError(prev.Lapsed, prev.Reservation)
				}
				return prev.Reservation, nil
			case !errors.Is(err, sql.ErrNoRows):
				return nil, dbError(err, "idempotency key")
			}
		}
		msgs, msgRows := rec.Messages, rows
		if rec.Abort && r.State == coachd.ReservationFinalized {
			// A final record ended the turn and stored it. An abort after
			// it (seed 000's route when its page went away as the reply
			// ended, or the record's answer was lost) sends the turn's
			// message again as partial: stored, it would stand twice.
			msgs, msgRows = notPartial(msgs, rows)
		}
		if err := appendInTx(ctx, tx, userID, rec.SessionID, msgs, msgRows); err != nil {
			if !sessionRefused(err) {
				return nil, err
			}
			// The session is gone or full, but the tokens were spent all
			// the same: they are charged, not left to a hold that expires
			// charging nothing.
			refused = err
		}
		// What the external loop used, priced by the caller in the
		// budget's unit (coachd.TurnRecord.Amount).
		spend := coachd.Spend{Amount: rec.Amount, Tokens: rec.TokensUsed}
		if rec.Answered && r.FreePreview && spend.Amount == 0 && spend.Tokens == 0 {
			// Not given back as a free turn that spent nothing (freePreview).
			spend.Amount = max(r.Estimate, 1)
		}
		if err := db.settleWith(ctx, tx, r, spend, mode); err != nil {
			return nil, err
		}
		if mode == settleCharge {
			if r.State == coachd.ReservationExpired && !r.FreePreview {
				held, err := db.rehold(ctx, tx, r)
				if err != nil {
					return nil, err
				}
				if !held {
					lapsed = lapsedError(lapsedMessage(r, db.budget.Unit), r)
				}
			}
			if err := db.holdRound(ctx, tx, r); err != nil {
				return nil, err
			}
		}
		if rec.IdempotencyKey != "" && refused == nil {
			// The messages are stored: a retry answers as this did.
			reply := recordReply{Reservation: r}
			if lapsed != nil {
				reply.Lapsed = lapsed.(*coachd.Error).Message
			}
			resp, _ := json.Marshal(reply)
			if _, err := tx.exec(ctx, `INSERT INTO idempotency_keys (user_id, idem_key, request_hash, response, created_at) VALUES (?, ?, ?, ?, ?)`,
				userID, rec.IdempotencyKey, rec.RequestHash, string(resp), tx.time(tx.now)); err != nil {
				return nil, dbError(err, "store idempotency key")
			}
		}
		return r, nil
	})
	if err != nil {
		return nil, err
	}
	if refused != nil {
		return nil, refused
	}
	if lapsed != nil {
		return nil, lapsed
	}
	return res, nil
}

// recordReply is a record's answer as its idempotency key keeps it: the
// reservation, and Lapsed, the message of the budget's refusal to hold
// the turn again (rehold), which a retry answers again.
type recordReply struct {
	*coachd.Reservation
	Lapsed string `json:"lapsed,omitempty"`
}

// rehold holds again the rest of r's estimate, r being a turn whose hold
// ran out and was released (an expired reservation) while the app's loop
// still ran it: a round longer than coachd.RoundHoldTTL. The record that
// says the loop goes on (a charge) finds it so, and the loop may not go
// on spending beside the turns that were given the room meanwhile: it
// holds again when the budget has room for the rest (the user's other
// stale holds released and a new period begun first, as a reservation
// does), and reports false, holding nothing, when it has not. The caller
// holds the user's lock.
func (db *DB) rehold(ctx context.Context, tx *tx, r *coachd.Reservation) (bool, error) {
	if _, err := db.expireUser(ctx, tx, r.UserID); err != nil {
		return false, err
	}
	if err := db.rollPeriod(ctx, tx, r.UserID); err != nil {
		return false, err
	}
	rest := max(r.Estimate-r.Charged, 0)
	res, err := tx.exec(ctx, reserveSQL, rest, r.UserID, rest, rest)
	if err != nil {
		return false, dbError(err, "hold reservation again")
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		if err != nil {
			return false, dbError(err, "hold reservation again")
		}
		return false, db.remaining(ctx, tx, r)
	}
	// Until holdRound times it as a round's.
	until := tx.now.Add(db.budget.TTL)
	if _, err := tx.exec(ctx, `UPDATE reservations SET state = 'active', held = ?, expires_at = `+leaseUntil[tx.d]+`, updated_at = ? WHERE id = ?`,
		rest, leaseArg(tx, until), tx.time(tx.now), r.ID); err != nil {
		return false, dbError(err, "hold reservation again")
	}
	r.State, r.Held, r.ExpiresAt = coachd.ReservationActive, rest, storeTime(until)
	if err := db.addLedger(ctx, tx, r, 0, rest, 0, "reserve"); err != nil {
		return false, err
	}
	return true, db.remaining(ctx, tx, r)
}

// lapsedMessage says why rehold could not hold r again, in unit.
func lapsedMessage(r *coachd.Reservation, unit coachd.BudgetUnit) string {
	const why = "this turn's hold ran out before this record (a round longer than it) and the budget has no room to hold it again: "
	rest := max(r.Estimate-r.Charged, 0)
	if unit == coachd.UnitMicroUSD { // the amounts are micro-dollars
		return fmt.Sprintf("Budget exhausted: "+why+"%s remains and the rest of the turn may cost about %s. The round is stored and charged; end the turn.",
			coachd.USDText(r.Remaining), coachd.USDText(rest))
	}
	return fmt.Sprintf("Token budget exhausted: "+why+"%d tokens remain and the rest of the turn needs about %d. The round is stored and charged; end the turn.",
		r.Remaining, rest)
}

// lapsedError is rehold's refusal, msg, of the turn of r.
func lapsedError(msg string, r *coachd.Reservation) error {
	e := coachd.Errorf(coachd.EBUDGET, "%s", msg)
	e.Extra = map[string]any{"remaining": r.Remaining, "estimated_tokens": max(r.Estimate-r.Charged, 0)}
	return e
}

// holdRound makes the hold of r, which a record kept open (the app's
// loop goes on), last coachd.RoundHoldTTL from now when that is shorter
// than the store's expiry: a charge moved it on by the whole expiry, and
// a loop that stopped after the record (seed 000 at MAX_STEPS) held the
// budget until then. Not while coachd runs a turn of its own in the
// session (its lease), whose hold is its own to time, as supersede.
func (db *DB) holdRound(ctx context.Context, tx *tx, r *coachd.Reservation) error {
	d := min(coachd.RoundHoldTTL, db.budget.TTL)
	if r.State != coachd.ReservationActive || d >= db.budget.TTL {
		return nil
	}
	q := `UPDATE reservations SET expires_at = ` + leaseUntil[tx.d] + ` WHERE id = ? AND state = 'active'
		AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = reservations.session_id AND s.turn_owner IS NOT NULL AND NOT (s.` + leaseOver[tx.d] + `))`
	args := leaseOverArgs([]any{leaseArg(tx, tx.now.Add(d)), r.ID}, tx)
	if tx.d == dialectPostgres {
		err := tx.queryRow(ctx, q+` RETURNING expires_at`, args...).Scan(timeCol{&r.ExpiresAt})
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return dbError(err, "hold reservation")
		}
		return nil
	}
	res, err := tx.exec(ctx, q, args...)
	if err != nil {
		return dbError(err, "hold reservation")
	}
	if n, err := res.RowsAffected(); err == nil && n == 1 {
		r.ExpiresAt = storeTime(tx.now.Add(d))
	}
	return nil
}

// notPartial is msgs and their rows without the partial ones.
func notPartial(msgs []*coachd.Message, rows []messageRow) ([]*coachd.Message, []messageRow) {
	var keep []*coachd.Message
	var keepRows []messageRow
	for i, m := range msgs {
		if !m.Partial {
			keep, keepRows = append(keep, m), append(keepRows, rows[i])
		}
	}
	return keep, keepRows
}

// sessionRefused reports whether appending failed because the session
// cannot take the messages (it is not there, or full): a refusal, not a
// failed statement, so the transaction may still settle the reservation.
func sessionRefused(err error) bool {
	var e *coachd.Error
	if !errors.As(err, &e) || (e.Err != nil && !errors.Is(e.Err, sql.ErrNoRows)) {
		return false
	}
	return e.Code == coachd.ENOTFOUND || e.Code == coachd.ECONFLICT
}

// appendInTx is AppendMessages inside a caller's transaction (so that
// messages and their charge commit together). IDs are assigned to msgs
// before commit; the caller discards them when the transaction fails.
func appendInTx(ctx context.Context, tx *tx, userID, sessionID string, msgs []*coachd.Message, rows []messageRow) error {
	if len(msgs) == 0 {
		_, err := findSession(ctx, tx, userID, sessionID)
		return err
	}
	ids, first, _, err := insertMessages(ctx, tx, userID, sessionID, msgs, rows, "", false, nil, 0, "")
	if err != nil {
		return err
	}
	assignMessages(msgs, ids, sessionID, first, tx.now)
	return nil
}

package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/coachd/coachd"
)

// Record appends an external loop's messages to the session and settles
// the reservation with the turn's cumulative tokens, in one transaction.
// With an idempotency key, a repeat returns the first result and changes
// nothing; the same key with a different request is ECONFLICT.
func (db *DB) Record(ctx context.Context, userID string, rec coachd.TurnRecord) (*coachd.Reservation, error) {
	if rec.TokensUsed < 0 {
		return nil, coachd.Invalid(coachd.FieldError{Field: "tokens_used", Message: "must not be negative", Code: "range"})
	}
	rows := make([]messageRow, len(rec.Messages))
	for i, m := range rec.Messages {
		var err error
		if rows[i], err = encodeMessage(i, m); err != nil {
			return nil, err
		}
	}
	mode := settleCharge
	switch {
	case rec.Abort:
		mode = settleAbort
	case rec.Final:
		mode = settleFinalize
	}
	return retry(ctx, func() (*coachd.Reservation, error) {
		tx, err := db.beginWrite(ctx)
		if err != nil {
			return nil, err
		}
		defer tx.Rollback()
		// Lock first: a concurrent retry with the same key waits here and
		// then finds the key below.
		if err := lockUser(ctx, tx, userID); err != nil {
			return nil, err
		}
		r, err := lockReservation(ctx, tx, userID, rec.ReservationID)
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
				prev := &coachd.Reservation{}
				if err := json.Unmarshal([]byte(resp), prev); err != nil {
					return nil, internal(err, "decode idempotent response")
				}
				return prev, nil
			case !errors.Is(err, sql.ErrNoRows):
				return nil, dbError(err, "idempotency key")
			}
		}
		if err := appendInTx(ctx, tx, userID, rec.SessionID, rec.Messages, rows); err != nil {
			return nil, err
		}
		if err := db.apply(ctx, tx, r, rec.TokensUsed, mode); err != nil {
			return nil, err
		}
		if err := remaining(ctx, tx, r); err != nil {
			return nil, err
		}
		if rec.IdempotencyKey != "" {
			resp, _ := json.Marshal(r)
			if _, err := tx.exec(ctx, `INSERT INTO idempotency_keys (user_id, idem_key, request_hash, response, created_at) VALUES (?, ?, ?, ?, ?)`,
				userID, rec.IdempotencyKey, rec.RequestHash, string(resp), tx.time(tx.now)); err != nil {
				return nil, dbError(err, "store idempotency key")
			}
		}
		return r, tx.commit()
	})
}

// appendInTx is AppendMessages inside a caller's transaction (so that
// messages and their charge commit together). IDs are assigned to msgs
// before commit; the caller discards them when the transaction fails.
func appendInTx(ctx context.Context, tx *tx, userID, sessionID string, msgs []*coachd.Message, rows []messageRow) error {
	n := int64(len(msgs))
	if n == 0 {
		_, err := findSession(ctx, tx, userID, sessionID)
		return err
	}
	var next int64
	if err := tx.queryRow(ctx, `UPDATE sessions SET next_seq = next_seq + ?, message_count = message_count + ?, updated_at = ?
		WHERE id = ? AND user_id = ? RETURNING next_seq`,
		n, n, tx.time(tx.now), sessionID, userID).Scan(&next); err != nil {
		return dbError(err, "session %q", sessionID)
	}
	seq := next - n
	for i, m := range msgs {
		if m.ID == "" {
			m.ID = coachd.NewID(coachd.PrefixMessage, tx.now)
		}
		if _, err := tx.exec(ctx, `INSERT INTO messages (id, session_id, seq, role, content, content_json, metadata, usage_json, partial, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			m.ID, sessionID, seq, string(m.Role), m.Content, rows[i].blocks, rows[i].metadata, rows[i].usage,
			m.Partial, tx.time(tx.now)); err != nil {
			return dbError(err, "append messages[%d]", i)
		}
		m.SessionID, m.Seq, m.CreatedAt = sessionID, seq, tx.now
		seq++
	}
	return nil
}

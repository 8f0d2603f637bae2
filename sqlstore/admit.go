package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/coachd/coachd"
)

// AdmitTurn takes the session's turn lease for a.Owner and reserves the
// turn's budget in one write transaction: both or neither. The lease is
// AcquireTurn's conditional UPDATE, which also returns the session's
// message count and update time: when they moved since the turn read the
// session (a.Seen), nothing is taken and the answer is
// coachd.ErrSessionChanged. The reservation is Reserve's, under the same
// user lock; the event log's turn, when a.Stream asks for it, BeginTurn's.
func (db *DB) AdmitTurn(ctx context.Context, a coachd.TurnAdmission) (*coachd.Admission, error) {
	if a.Seen == nil || a.Owner == "" {
		return nil, coachd.Invalid(coachd.FieldError{Field: "session", Message: "and owner are required", Code: "required"})
	}
	req := a.Reserve
	if req.Estimate < 0 {
		return nil, coachd.Invalid(coachd.FieldError{Field: "estimate", Message: "must not be negative", Code: "range"})
	}
	req.Estimate = min(req.Estimate, coachd.MaxTurnTokens)
	req.UserID, req.SessionID = a.Seen.UserID, a.Seen.ID
	return writeTx(ctx, db, func(tx *tx) (*coachd.Admission, error) {
		// The user's lock first, as every budget write takes it.
		st, err := db.budgetState(ctx, tx, req.UserID)
		if err != nil {
			return nil, err
		}
		var count int64
		var updated time.Time
		err = tx.queryRow(ctx, `UPDATE sessions SET turn_owner = ?, turn_until = ?
			WHERE id = ? AND user_id = ? AND (turn_owner IS NULL OR turn_owner = ? OR turn_until <= ?)
			RETURNING message_count, updated_at`,
			a.Owner, tx.time(storeTime(a.Until)), req.SessionID, req.UserID, a.Owner, tx.time(tx.now)).
			Scan(&count, timeCol{&updated})
		switch {
		case errors.Is(err, sql.ErrNoRows):
			if _, err := findSession(ctx, tx, req.UserID, req.SessionID); err != nil {
				return nil, err
			}
			return nil, coachd.Errorf(coachd.ETURNINPROGRESS, "a turn is already running on this session")
		case err != nil:
			return nil, dbError(err, "acquire turn")
		case count != a.Seen.MessageCount || !updated.Equal(a.Seen.UpdatedAt):
			return nil, coachd.ErrSessionChanged
		}
		res, err := db.reserve(ctx, tx, req, st)
		if err != nil {
			return nil, err
		}
		adm := &coachd.Admission{Reservation: res}
		if a.Stream != nil {
			if adm.StreamTurn, err = beginTurn(ctx, tx, req.UserID, req.SessionID, a.Stream.Owner, a.Stream.Keep); err != nil {
				return nil, err
			}
		}
		return adm, nil
	})
}

// EndTurn settles the turn's reservation (as Settle; id "" settles
// nothing) and releases owner's lease (as ReleaseTurn; owner "" releases
// nothing) in one write transaction. It returns the settled reservation,
// nil when there was none.
func (db *DB) EndTurn(ctx context.Context, userID, sessionID, owner, id string, s coachd.Spend, mode coachd.SettleMode) (*coachd.Reservation, error) {
	s, err := settleSpend(s)
	if err != nil {
		return nil, err
	}
	return budgetTx(ctx, db, userID, func(tx *tx) (*coachd.Reservation, error) {
		var r *coachd.Reservation
		if id != "" {
			if r, err = db.settle(ctx, tx, userID, id, s, mode); err != nil {
				return nil, err
			}
		}
		if owner != "" {
			if err := releaseTurn(ctx, tx, userID, sessionID, owner); err != nil {
				return nil, err
			}
		}
		return r, nil
	})
}

package sqlstore

import (
	"context"
	"time"

	"github.com/coachd/coachd"
)

// AcquireTurn takes the session's turn lease for owner until the given
// time, in one conditional UPDATE: it succeeds only when no other owner
// holds an unexpired lease, so two replicas can never both run a turn on
// one session. A lease left by a crashed process runs out by itself.
func (db *DB) AcquireTurn(ctx context.Context, userID, sessionID, owner string, until time.Time) error {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	res, err := tx.exec(ctx, `UPDATE sessions SET turn_owner = ?, turn_until = ?
		WHERE id = ? AND user_id = ? AND (turn_owner IS NULL OR turn_owner = ? OR turn_until <= ?)`,
		owner, tx.time(storeTime(until)), sessionID, userID, owner, tx.time(tx.now))
	if err != nil {
		return dbError(err, "acquire turn")
	}
	if n, err := res.RowsAffected(); err != nil {
		return dbError(err, "acquire turn")
	} else if n == 0 {
		if _, err := findSession(ctx, tx, userID, sessionID); err != nil {
			return err
		}
		return coachd.Errorf(coachd.ETURNINPROGRESS, "a turn is already running on this session")
	}
	return tx.commit()
}

// ReleaseTurn gives up owner's lease; another owner's lease is left alone.
func (db *DB) ReleaseTurn(ctx context.Context, userID, sessionID, owner string) error {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.exec(ctx, `UPDATE sessions SET turn_owner = NULL, turn_until = NULL
		WHERE id = ? AND user_id = ? AND turn_owner = ?`, sessionID, userID, owner); err != nil {
		return dbError(err, "release turn")
	}
	return tx.commit()
}

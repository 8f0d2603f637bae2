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
	if err := releaseTurn(ctx, tx, userID, sessionID, owner); err != nil {
		return err
	}
	return tx.commit()
}

func releaseTurn(ctx context.Context, tx *tx, userID, sessionID, owner string) error {
	if _, err := tx.exec(ctx, `UPDATE sessions SET turn_owner = NULL, turn_until = NULL
		WHERE id = ? AND user_id = ? AND turn_owner = ?`, sessionID, userID, owner); err != nil {
		return dbError(err, "release turn")
	}
	return nil
}

// ExpireSessions marks agent's active sessions idle for longer than idle
// as expired (seed 002's auto-expiry): no message, no update and no turn
// running since. It returns how many it expired.
func (db *DB) ExpireSessions(ctx context.Context, agent string, idle time.Duration) (int, error) {
	if idle <= 0 {
		return 0, nil
	}
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	res, err := tx.exec(ctx, `UPDATE sessions SET status = 'expired', updated_at = ?
		WHERE agent = ? AND status = 'active' AND updated_at < ? AND (turn_owner IS NULL OR turn_until <= ?)`,
		tx.time(tx.now), agent, tx.time(storeTime(tx.now.Add(-idle))), tx.time(tx.now))
	if err != nil {
		return 0, dbError(err, "expire sessions")
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, dbError(err, "expire sessions")
	}
	return int(n), tx.commit()
}

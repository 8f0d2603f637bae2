package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/coachd/coachd"
)

// keepTurnKey keeps the admitted turn under the user's key (see
// coachd.StreamStart.Key), in the admission's transaction: a key taken
// meanwhile is coachd.ErrTurnKeyTaken, and the admission rolls back.
func keepTurnKey(ctx context.Context, tx *tx, userID, sessionID string, turn int64, s *coachd.StreamStart) error {
	res, err := tx.exec(ctx, `INSERT INTO turn_keys (user_id, idem_key, request_hash, session_id, turn) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (user_id, idem_key) DO NOTHING`, userID, s.Key, s.Hash, sessionID, turn)
	if err != nil {
		return dbError(err, "keep turn key")
	}
	if n, err := res.RowsAffected(); err != nil {
		return dbError(err, "keep turn key")
	} else if n == 0 {
		return coachd.ErrTurnKeyTaken
	}
	return nil
}

// FindTurnKey implements coachd.StreamService.
func (db *DB) FindTurnKey(ctx context.Context, userID, key string) (coachd.TurnKey, error) {
	var k coachd.TurnKey
	tx, err := db.beginRead(ctx)
	if err != nil {
		return k, err
	}
	defer tx.Rollback()
	err = tx.queryRow(ctx, `SELECT session_id, turn, request_hash FROM turn_keys WHERE user_id = ? AND idem_key = ?`,
		userID, key).Scan(&k.SessionID, &k.Turn, &k.Hash)
	if errors.Is(err, sql.ErrNoRows) {
		return k, coachd.Errorf(coachd.ENOTFOUND, "no turn under this key")
	}
	return k, dbError(err, "find turn key")
}

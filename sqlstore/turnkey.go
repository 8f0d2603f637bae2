package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/coachd/coachd"
)

// keepTurnKey keeps the admitted turn under the user's key (see
// coachd.StreamStart.Key), in the admission's transaction: a key taken
// meanwhile is coachd.ErrTurnKeyTaken, and the admission rolls back. A
// new attempt of a key's released turn (StreamStart.Replaces) that
// stores no message (noMessage: the stored one runs again) moves the key
// to the new turn in the same statement, only while it still names the
// released one for the same request in the same session: of two retries
// at once, one runs. One that would store its message again is refused
// as taken: the key's failure is answered again.
func keepTurnKey(ctx context.Context, tx *tx, userID, sessionID string, turn int64, s *coachd.StreamStart, noMessage bool) error {
	q, args := keepTurnKeySQL, []any{userID, s.Key, s.Hash, sessionID, turn}
	if s.Replaces > 0 && noMessage {
		q, args = retryTurnKeySQL, append(args, s.Replaces)
	}
	res, err := tx.exec(ctx, q, args...)
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

const (
	keepTurnKeySQL = `INSERT INTO turn_keys (user_id, idem_key, request_hash, session_id, turn) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (user_id, idem_key) DO NOTHING`
	retryTurnKeySQL = `INSERT INTO turn_keys (user_id, idem_key, request_hash, session_id, turn) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (user_id, idem_key) DO UPDATE SET turn = excluded.turn
		WHERE turn_keys.turn = ? AND turn_keys.session_id = excluded.session_id AND turn_keys.request_hash = excluded.request_hash`
)

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

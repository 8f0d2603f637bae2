package sqlstore

import (
	"context"
	"time"

	"github.com/coachd/coachd"
)

// GiveUpTurn implements coachd.StreamService. The turn's ending goes in
// only while the turn has not ended and shows no life since aliveAt,
// checked in the write that ends it: a reader that judged the turn dead
// while its process was coming back (a partition healing) does not end a
// turn that went on, whose events logged meanwhile would come after the
// ending. Giving up stamps no sign of life.
func (db *DB) GiveUpTurn(ctx context.Context, userID, sessionID string, turn int64, aliveAt time.Time, events []coachd.Event) (bool, error) {
	data, err := encodeEvents(events)
	if err != nil {
		return false, internal(err, "encode event")
	}
	var last int64
	if n := len(events); n > 0 {
		last = events[n-1].Seq
	}
	const end = `UPDATE turns SET ended = ? WHERE session_id = ? AND turn = ? AND user_id = ? AND NOT ended AND alive_at = ?`
	const insert = `INSERT INTO turn_events (session_id, turn, last_seq, data) `
	tx, err := db.beginAuto(ctx, true)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	args := []any{true, sessionID, turn, userID, tx.time(aliveAt)}
	if db.dialect == dialectPostgres {
		// One statement: the row's lock orders it with the turn's own
		// writes, and the WHERE is checked again on the row they left.
		var n int
		if err := tx.queryRow(ctx, `WITH t AS (`+end+` RETURNING session_id, turn), e AS (`+insert+`
			SELECT t.session_id, t.turn, ?, ? FROM t ON CONFLICT (session_id, turn, last_seq) DO NOTHING)
			SELECT count(*) FROM t`, append(args, last, data)...).Scan(&n); err != nil {
			return false, dbError(err, "give up turn")
		}
		return n > 0, tx.commit()
	}
	res, err := tx.exec(ctx, end, args...)
	if err != nil {
		return false, dbError(err, "give up turn")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	if _, err := tx.exec(ctx, insert+`VALUES (?, ?, ?, ?) ON CONFLICT (session_id, turn, last_seq) DO NOTHING`,
		sessionID, turn, last, data); err != nil {
		return false, dbError(err, "give up turn")
	}
	return true, tx.commit()
}

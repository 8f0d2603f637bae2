package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"
)

// errTurnEnded is insertMessages' answer when its fence (the event log's
// turn) had ended: its readers gave the turn up, or another owner took
// the session's lease (a new turn, on another replica).
var errTurnEnded = errors.New("the event log's turn has ended")

// The fence of a turn's messages, checked in the statement that reserves
// their seqs (appendSQL): they go in only while the log's turn is the
// user's and has not ended, and, given the turn's lease owner, while the
// session's lease is still that owner's (fenceLease, on the session's
// row, which its lock orders with another replica's admission): a
// turn stalled past its lease (a cut connection, a paused process)
// whose session another replica took for a new turn must not write into
// it, however long before any reader gave it up. On Postgres the turn's row is updated (a
// sign of life, as the turn's log writes stamp), so a give-up
// (GiveUpTurn, which ends the turn only while alive_at is the one its
// reader judged) and the messages' write are ordered by the row's lock:
// whichever comes second sees the first. A read alone would let both
// through, each from its own snapshot. On SQLite the write lock orders
// them.
const (
	fencePG   = `f AS (UPDATE turns SET alive_at = clock_timestamp() WHERE session_id = ? AND turn = ? AND user_id = ? AND NOT ended RETURNING 1)`
	fenceLite = ` AND EXISTS (SELECT 1 FROM turns WHERE session_id = ? AND turn = ? AND user_id = ? AND NOT ended)`
	fenceAt   = `message_count + ? <= ?`
	// fenceLease's args are the lease owner twice ("" for none).
	fenceLease = ` AND (? = '' OR turn_owner = ?)`
)

// fenced is insertMessages' statement q with the fence of the log's
// turn: on Postgres a WITH before q's own, whose args go first; on
// SQLite a condition at the end of q's UPDATE (q is that UPDATE), whose
// args go last.
func fenced(d dialect, q string) string {
	if d == dialectPostgres {
		q = strings.Replace(q, fenceAt, fenceAt+fenceLease+` AND EXISTS (SELECT 1 FROM f)`, 1)
		if rest, ok := strings.CutPrefix(q, `WITH `); ok {
			return `WITH ` + fencePG + `, ` + rest
		}
		return `WITH ` + fencePG + ` ` + q
	}
	return strings.Replace(q, fenceAt, fenceAt+fenceLease+fenceLite, 1)
}

// fencedAppendSQL[d] and fencedSettleSQL[d] are appendSQL's and
// appendSettleSQL's statements fenced in dialect d, made once.
var fencedAppendSQL, fencedSettleSQL = func() (qs [2][2][2][insertBatch + 1]string, ss [2][2][insertBatch + 1]string) {
	for _, d := range []dialect{dialectSQLite, dialectPostgres} {
		for k := range appendSQL {
			for r := range appendSQL[k] {
				for n, q := range appendSQL[k][r] {
					if q != "" {
						qs[d][k][r][n] = fenced(d, q)
					}
				}
			}
		}
		for r := range appendSettleSQL {
			for n, q := range appendSettleSQL[r] {
				if q != "" {
					ss[d][r][n] = fenced(d, q)
				}
			}
		}
	}
	return qs, ss
}()

// turnLive reports whether the session's logged turn is the user's and
// has not ended, and the session's lease is still lease's (any when "").
func turnLive(ctx context.Context, tx *tx, userID, sessionID string, turn int64, lease string) (bool, error) {
	var one int
	err := tx.queryRow(ctx, `SELECT 1 FROM turns t JOIN sessions s ON s.id = t.session_id
		WHERE t.session_id = ? AND t.turn = ? AND t.user_id = ? AND NOT t.ended AND (? = '' OR s.turn_owner = ?)`,
		sessionID, turn, userID, lease, lease).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, dbError(err, "read turn %d", turn)
	}
	return true, nil
}

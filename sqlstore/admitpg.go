package sqlstore

import (
	"context"

	"github.com/coachd/coachd"
)

// takeTurnPG is takeTurn on Postgres with the rows an admission writes
// after it in the same statement: the event log's turn (beginTurn's,
// when a.Stream is set) and the user message (msgs, none or one, with
// its row and id), at the seq the UPDATE reserved. Each is a
// data-modifying WITH that reads the UPDATE's row, so they write only
// when it matched: a statement that took nothing wrote nothing, and the
// caller goes on as after takeTurn. One round trip instead of three, on
// the first text's path. It returns what takeTurn does and the turn's
// number in the event log (0 without a.Stream, or when not taken); the
// caller applies the log's retention (keepTurns).
func takeTurnPG(ctx context.Context, tx *tx, a coachd.TurnAdmission, msgs []*coachd.Message, rows []messageRow, ids []string) (next, turn int64, taken bool, err error) {
	n := int64(len(msgs))
	q := `WITH s AS (` + takeTurnSQL + `)`
	args := takeTurnArgs(tx, a, n)
	turnCol := `0`
	if a.Stream != nil {
		q += `, t AS (` + turnInsert + ` FROM s RETURNING turn)`
		now := tx.time(tx.now)
		args = append(args, a.Stream.Owner, now, now)
		turnCol = `(SELECT turn FROM t)`
	}
	if n > 0 {
		m, r := msgs[0], rows[0]
		q += `, m AS (` + messageInsert + ` SELECT ?, s.id, s.next_seq - 1, ?, ?, ?, ?, ?, ?, ? FROM s)`
		args = append(args, ids[0], string(m.Role), m.Content, r.blocks, r.metadata, r.usage, m.Partial, tx.time(tx.now))
	}
	q += ` SELECT ` + sessionColumns + `, next_seq, ` + turnCol + ` FROM s`
	now, err := scanSessionAnd(tx.queryRow(ctx, q, args...), &next, &turn)
	next, taken, err = tookTurn(a, n, now, next, err)
	if !taken {
		turn = 0
	}
	return next, turn, taken, err
}

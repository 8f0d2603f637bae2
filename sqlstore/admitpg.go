package sqlstore

import (
	"context"
	"fmt"

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
	q += withMessagesSQL[n]
	args = appendMessageArgs(args, tx, msgs, rows, ids)
	q += ` SELECT ` + sessionColumns + `, next_seq, ` + turnCol + ` FROM s`
	now, err := scanSessionAnd(tx.queryRow(ctx, q, args...), &next, &turn)
	next, taken, err = tookTurn(a, n, now, next, err)
	if !taken {
		turn = 0
	}
	return next, turn, taken, err
}

// withMessagesSQL[n] is the WITHs that insert n messages after a
// statement's first, s, an UPDATE of their session that returns its id
// and next_seq after reserving n seqs: a data-modifying WITH a message,
// at its seq, each reading s, so they write only when it matched
// (", m0 AS (…), m1 AS (…)"); appendMessageArgs adds their args.
var withMessagesSQL = func() (qs [insertBatch + 1]string) {
	for n := 1; n <= insertBatch; n++ {
		for i := range n {
			qs[n] += fmt.Sprintf(`, m%d AS (`+messageInsert+` SELECT ?, s.id, s.next_seq - %d, ?, ?, ?, ?, ?, ?, ? FROM s)`, i, n-i)
		}
	}
	return qs
}()

// appendMessageArgs appends withMessagesSQL's args for msgs (with their
// rows and ids), at most insertBatch of them, to args.
func appendMessageArgs(args []any, tx *tx, msgs []*coachd.Message, rows []messageRow, ids []string) []any {
	for i, m := range msgs {
		args = append(args, ids[i], string(m.Role), m.Content, rows[i].blocks, rows[i].metadata, rows[i].usage, m.Partial, tx.time(tx.now))
	}
	return args
}

// lockLimits takes the user's lock for an admission (lockBudget) and
// counts each of limits after it (hitLimit): coachd.ErrLimitReached when
// one is reached, and the caller's transaction then rolls back what was
// counted. On Postgres it is one statement (lockLimitsPG) when the limits
// are a few, of different keys.
func (db *DB) lockLimits(ctx context.Context, tx *tx, userID string, limits []coachd.LimitHit) (*userBudgetState, error) {
	if tx.d == dialectPostgres && len(limits) > 0 && len(limits) <= maxFoldedLimits && distinctKeys(limits) {
		return db.lockLimitsPG(ctx, tx, userID, limits)
	}
	st, err := db.lockBudget(ctx, tx, userID)
	if err != nil {
		return nil, err
	}
	for _, l := range limits {
		if _, ok, err := hitLimit(ctx, tx, userID, l); err != nil {
			return nil, err
		} else if !ok {
			return nil, coachd.ErrLimitReached
		}
	}
	return st, nil
}

// lockLimitsPG is lockBudget and hitLimit of each of limits in one
// statement, one round trip instead of 1+len(limits): budgetState's
// locking read, then each limit's count as a data-modifying WITH that
// reads the locked row. That makes the lock come first, as lockUser
// orders it, and a user who is not there counts nothing. The statement
// does not see its own writes, so two limits of one key (one window) are
// counted apart (lockLimits).
func (db *DB) lockLimitsPG(ctx context.Context, tx *tx, userID string, limits []coachd.LimitHit) (*userBudgetState, error) {
	args := make([]any, 0, 3+4*len(limits))
	args = append(args, tx.time(storeTime(db.budget.Period.Start(tx.now))), tx.time(tx.now), userID)
	for _, l := range limits {
		args = append(args, userID, l.Key, tx.time(storeTime(l.Window)), l.Limit)
	}
	var st userBudgetState
	var n int
	if err := tx.queryRow(ctx, lockLimitsSQL[len(limits)], args...).Scan(&st.roll, &st.stale, &n); err != nil {
		return nil, dbError(err, "user %q", userID)
	}
	if n < len(limits) {
		return nil, coachd.ErrLimitReached
	}
	return &st, nil
}

// maxFoldedLimits bounds the limits lockLimitsPG counts in its statement.
const maxFoldedLimits = 4

// lockLimitsSQL[n] is lockLimitsPG's statement for n limits; it answers
// budgetState's two columns and how many limits counted.
var lockLimitsSQL = func() (qs [maxFoldedLimits + 1]string) {
	for n := 1; n < len(qs); n++ {
		q, count := `WITH u AS (`+budgetStateSQL+` FOR UPDATE)`, ``
		for i := range n {
			q += fmt.Sprintf(`, h%d AS (`+limitInsert+` SELECT ?, ?, ?, 1 FROM u `+limitConflict+`)`, i)
			count += fmt.Sprintf(` + (SELECT count(*) FROM h%d)`, i)
		}
		qs[n] = q + ` SELECT roll, stale, 0` + count + ` FROM u`
	}
	return qs
}()

// distinctKeys reports whether no two of limits share a key.
func distinctKeys(limits []coachd.LimitHit) bool {
	for i, l := range limits {
		for _, m := range limits[:i] {
			if l.Key == m.Key {
				return false
			}
		}
	}
	return true
}

package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/coachd/coachd"
)

// admitPG is, on Postgres, a chat turn's admission up to its reservation
// in one statement, one round trip on the first text's path where there
// were three (the lock's and limits', the lease's, the hold's). In
// order: the user's lock with the budget's state (lockBudget's read) and
// the counts of limits (lockLimitsPG's); the lease and the user
// message's seqs (takeTurn's UPDATE, which reads the lock's row, so
// the user's lock comes first, as lockUser orders it); the event log's
// turn (beginTurn's, when a.Stream is set); the user message (msgs, none
// or one, with its row and id) at the seq the lease reserved; and the
// budget's hold of hold with its rows (reserveHeldPG's), unless the
// user's stale holds or a new period must be dealt with first. Each part
// after the lease is a data-modifying WITH that reads the lease's row,
// so it writes only when the lease was taken.
//
// A reached limit is coachd.ErrLimitReached. When the lease was not
// taken, or the user is not there, the answer is errUnfold: the
// statement may have counted limits, and the caller rolls back and
// admits one statement at a time, which tells why. When the budget did
// not hold hold, the caller reserves from the state returned.
func (db *DB) admitPG(ctx context.Context, tx *tx, a coachd.TurnAdmission, limits []coachd.LimitHit,
	msgs []*coachd.Message, rows []messageRow, ids []string, hold *coachd.Reservation) (pgAdmission, error) {
	n := int64(len(msgs))
	stream := 0
	// Sized for the statement's args: the lock's and limits', the
	// lease's, the turn's, the message's and the hold's.
	args := db.lockArgs(make([]any, 0, 3+6*len(limits)+13+3+8*len(msgs)+21), tx, hold.UserID, limits)
	args = append(args, takeTurnArgs(tx, a, n)...)
	if a.Stream != nil {
		stream = 1
		args = append(args, turnInsertArgs(tx, a.Stream.Owner)...)
	}
	args = appendMessageArgs(args, tx, msgs, rows, ids)
	args = db.holdArgs(args, tx, hold)
	q := admitSQL[len(limits)][stream][n]
	var p pgAdmission
	var counted int
	var budget, used, reserved sql.NullInt64
	now, err := scanSessionAnd(tx.queryRow(ctx, q, args...),
		&p.next, &p.turn, &p.st.roll, &p.st.stale, &counted, &budget, &used, &reserved, timeCol{&hold.PeriodStart}, timeCol{&hold.ExpiresAt})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return p, errUnfold
	case err != nil:
		return p, dbError(err, "admit turn")
	case counted < len(limits):
		return p, coachd.ErrLimitReached
	}
	if p.next, _, err = tookTurn(a, n, now, p.next, nil); err != nil {
		return p, err
	}
	p.held = remainingFrom(hold, budget, used, reserved)
	return p, nil
}

// admitSQL[l][t][n] is admitPG's statement for l limits, with the event
// log's turn when t is 1, and n user messages (none or one).
var admitSQL = func() (qs [maxFoldedLimits + 1][2][2]string) {
	for l := range qs {
		withs, count := lockWiths(l)
		for t, turn := range []string{``, `, t AS (` + turnInsert[dialectPostgres] + ` FROM s RETURNING turn)`} {
			turnCol := [2]string{`0`, `(SELECT turn FROM t)`}[t]
			for n := range qs[l][t] {
				qs[l][t][n] = `WITH ` + withs + `, s AS (` + takeTurnSet[dialectPostgres] + ` AND EXISTS (SELECT 1 FROM k)` + takeTurnReturning + `)` +
					turn + withMessagesSQL[n] +
					`, ` + holdWiths(` AND EXISTS (SELECT 1 FROM s) AND EXISTS (SELECT 1 FROM k WHERE NOT roll AND NOT stale)`) +
					` SELECT ` + sessionColumns + `, next_seq, ` + turnCol + `, (SELECT roll FROM k), (SELECT stale FROM k), ` + count +
					`, ` + holdColumns + ` FROM s LEFT JOIN u ON true`
			}
		}
	}
	return qs
}()

// pgAdmission is what admitPG's statement did: the budget's state it
// read under the user's lock, the session's next seq after the lease,
// the event log's turn (0 without a.Stream), and whether the budget held
// the reservation.
type pgAdmission struct {
	st         userBudgetState
	next, turn int64
	held       bool
}

// errUnfold is admitPG's answer when its statement took no lease.
var errUnfold = errors.New("sqlstore: the admission's statement took nothing")

// withMessagesSQL[n] is the WITHs that insert n messages after a
// statement's first, s, an UPDATE of their session that returns its id
// and next_seq after reserving n seqs: a data-modifying WITH a message,
// at its seq, each reading s, so they write only when it matched
// (", m0 AS (…), m1 AS (…)"); appendMessageArgs adds their args.
var withMessagesSQL = func() (qs [insertBatch + 1]string) {
	for n := 1; n <= insertBatch; n++ {
		for i := range n {
			qs[n] += fmt.Sprintf(`, m%d AS (`+messageInsert+` SELECT ?, s.id, s.next_seq - %d, ?, ?, ?, ?, ?, ?, ?, ? FROM s)`, i, n-i)
		}
	}
	return qs
}()

// appendMessageArgs appends withMessagesSQL's args for msgs (with their
// rows and ids), at most insertBatch of them, to args.
func appendMessageArgs(args []any, tx *tx, msgs []*coachd.Message, rows []messageRow, ids []string) []any {
	for i, m := range msgs {
		args = append(args, ids[i], string(m.Role), m.Content, rows[i].blocks, rows[i].metadata, rows[i].usage, m.Partial, tx.time(tx.now), rows[i].lite)
	}
	return args
}

// lockLimits takes the user's lock for an admission (lockBudget) and
// counts each of limits after it (hitLimit): coachd.ErrLimitReached when
// one is reached, and the caller's transaction then rolls back what was
// counted. On Postgres it is one statement (lockLimitsPG) when the limits
// are a few, of different keys.
func (db *DB) lockLimits(ctx context.Context, tx *tx, userID string, limits []coachd.LimitHit) (*userBudgetState, error) {
	if tx.d == dialectPostgres && len(limits) > 0 && foldsLimits(limits) {
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
// reads the locked row (lockWiths). That makes the lock come first, as
// lockUser orders it, and a user who is not there counts nothing. The
// statement does not see its own writes, so two limits of one key (one
// window) are counted apart (lockLimits).
func (db *DB) lockLimitsPG(ctx context.Context, tx *tx, userID string, limits []coachd.LimitHit) (*userBudgetState, error) {
	var st userBudgetState
	var n int
	if err := tx.queryRow(ctx, lockLimitsSQL[len(limits)], db.lockArgs(make([]any, 0, 3+6*len(limits)), tx, userID, limits)...).Scan(&st.roll, &st.stale, &n); err != nil {
		return nil, dbError(err, "user %q", userID)
	}
	if n < len(limits) {
		return nil, coachd.ErrLimitReached
	}
	return &st, nil
}

// foldsLimits reports whether limits can be counted in the user's
// lock's statement (lockLimitsPG, admitPG): a few, of different keys.
func foldsLimits(limits []coachd.LimitHit) bool {
	return len(limits) <= maxFoldedLimits && distinctKeys(limits)
}

// maxFoldedLimits bounds the limits one statement counts.
const maxFoldedLimits = 4

// lockWiths is the WITHs of the user's lock and n limits' counts: k,
// budgetState's locking read, then h0…, a data-modifying WITH a limit
// that reads k's row; count adds up the limits counted. lockArgs appends
// their args.
func lockWiths(n int) (withs, count string) {
	withs, count = `k AS (`+budgetStateSQL[dialectPostgres]+` FOR UPDATE)`, `0`
	for i := range n {
		withs += fmt.Sprintf(`, h%d AS (`+limitInsert+` SELECT ?, ?, `+limitWindow[dialectPostgres]+`, 1 FROM k `+limitConflict+`)`, i)
		count += fmt.Sprintf(` + (SELECT count(*) FROM h%d)`, i)
	}
	return withs, count
}

func (db *DB) lockArgs(args []any, tx *tx, userID string, limits []coachd.LimitHit) []any {
	args = db.budgetStateArgs(args, tx, userID)
	for _, l := range limits {
		args = append(limitWindowArgs(append(args, userID, l.Key), tx, l), l.Limit)
	}
	return args
}

// lockLimitsSQL[n] is lockLimitsPG's statement for n limits; it answers
// budgetState's two columns and how many limits counted.
var lockLimitsSQL = func() (qs [maxFoldedLimits + 1]string) {
	for n := 1; n < len(qs); n++ {
		withs, count := lockWiths(n)
		qs[n] = `WITH ` + withs + ` SELECT roll, stale, ` + count + ` FROM k`
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

package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/coachd/coachd"
)

// ReadTurn returns the user's session and its messages after seq after
// (all of them when 0). Attachments older than the session's newest
// coachd.MaxHistoryAttachments, which no turn sends, come without their
// data (turnMessagesSQL). On SQLite they come from one read transaction:
// the message count the session shows is the one the messages make. On
// Postgres the two statements run without a transaction (READ COMMITTED
// gave each its own snapshot anyway): a message stored in between makes
// the count the turn saw differ from the session's, and AdmitTurn then
// answers ErrSessionChanged, so the turn reads again.
func (db *DB) ReadTurn(ctx context.Context, userID, sessionID string, after int64) (*coachd.Session, []*coachd.Message, error) {
	tx, err := db.beginAuto(ctx, false)
	if err != nil {
		return nil, nil, err
	}
	defer tx.Rollback()
	s, err := reread(ctx, func() (*coachd.Session, error) { return findSession(ctx, tx, userID, sessionID) })
	if err != nil {
		return nil, nil, err
	}
	rows, err := reread(ctx, func() ([]turnRow, error) {
		return queryAll(ctx, tx, "list messages", scanTurnMessage, turnMessagesSQL[tx.d], s.ID, s.ID, after)
	})
	if err != nil {
		return nil, nil, err
	}
	if err := tx.commit(); err != nil {
		return nil, nil, err
	}
	msgs := make([]*coachd.Message, len(rows))
	for i, r := range rows {
		msgs[i] = r.msg
	}
	db.fillLite(ctx, rows) // old rows read whole: once (lite.go)
	return s, msgs, nil
}

// AdmitTurn takes the session's turn lease for a.Owner and reserves the
// turn's budget in one write transaction: both or neither. The lease is
// AcquireTurn's conditional UPDATE, which also returns the session's
// message count and update time: when they moved since the turn read the
// session (a.Seen), nothing is taken and the answer is
// coachd.ErrSessionChanged. The reservation is Reserve's, under the same
// user lock; the event log's turn, when a.Stream asks for it, BeginTurn's.
// a.Limits are counted after the user's lock, as HitLimit counts them (on
// Postgres in the lock's statement, lockLimits): one reached is
// coachd.ErrLimitReached, and then nothing is counted or taken.
// a.Message, the turn's user message, is appended in the same
// transaction: a session that cannot take it (full) refuses the
// admission, before any token is spent. On Postgres a chat turn's
// admission is one statement (admitPG): the user's lock and limits, the
// lease, the log's turn, the message, and the hold unless the user's
// stale holds or a new period must be dealt with first; when it takes no
// lease, the transaction is rolled back and the admission runs again one
// statement at a time, which tells why.
// A failed COMMIT returns the admission with its error (a COMMIT whose
// connection was lost may have been made): the caller releases the lease
// and aborts the reservation, which finds nothing when it was not.
// With a.Behind it returns once its statements ran, and Admission.Commit
// waits for the COMMIT: on SQLite the writer's group's, on Postgres the
// transaction's own, which runs on a goroutine (tx.commitBehind) while
// its row locks keep every other write of the user and the session
// waiting.
func (db *DB) AdmitTurn(ctx context.Context, a coachd.TurnAdmission) (*coachd.Admission, error) {
	if a.Seen == nil || a.Owner == "" {
		return nil, coachd.Invalid(coachd.FieldError{Field: "session", Message: "and owner are required", Code: "required"})
	}
	req := a.Reserve
	if req.Estimate < 0 {
		return nil, coachd.Invalid(coachd.FieldError{Field: "estimate", Message: "must not be negative", Code: "range"})
	}
	req.Estimate = min(req.Estimate, db.budget.Unit.MaxTurn())
	req.UserID, req.SessionID = a.Seen.UserID, a.Seen.ID
	var msgs []*coachd.Message
	var rows []messageRow
	if a.Message != nil {
		// Room for the reply too, or the model's tokens are spent on
		// one that cannot be stored: the admission only matches a
		// session as a.Seen shows it, so its count is the stored one.
		if a.Seen.MessageCount+2 > coachd.MaxMessagesPerSession {
			return nil, coachd.Errorf(coachd.ECONFLICT, "the session is full (%d messages): start a new session", coachd.MaxMessagesPerSession)
		}
		msgs = []*coachd.Message{a.Message}
		var err error
		if rows, err = encodeMessages(msgs); err != nil {
			return nil, err
		}
	}
	admit := func(fold bool) (admitted, func() error, error) {
		return writeTxBehind(ctx, db, a.Behind, func(tx *tx) (admitted, error) {
			return db.admitTurn(ctx, tx, a, req, msgs, rows, fold)
		})
	}
	r, wait, err := admit(true)
	if errors.Is(err, errUnfold) {
		r, wait, err = admit(false)
	}
	if err != nil {
		// Statements that ran and a COMMIT that failed: it may have been
		// made (its answer lost), and the caller undoes it.
		return r.adm, err
	}
	if msgs != nil {
		// Only once committed, as AppendMessages; or, left behind, once
		// its statements ran: the caller waits for Commit.
		assignMessages(msgs, r.ids, req.SessionID, r.first, r.at)
	}
	r.adm.Commit = wait
	return r.adm, nil
}

// admitted is what an admission's transaction did: the admission, and
// the user message's ids, first seq and time.
type admitted struct {
	adm   *coachd.Admission
	ids   []string
	first int64
	at    time.Time
}

// admitTurn is AdmitTurn's transaction, on Postgres for a chat turn in
// one statement (admitPG) when fold is set and a's limits allow.
func (db *DB) admitTurn(ctx context.Context, tx *tx, a coachd.TurnAdmission, req coachd.ReserveRequest,
	msgs []*coachd.Message, rows []messageRow, fold bool) (admitted, error) {
	var r admitted
	var st *userBudgetState
	var res *coachd.Reservation
	var next, streamTurn int64
	var taken, folded bool
	var err error
	if fold && tx.d == dialectPostgres && (a.Stream != nil || msgs != nil) && foldsLimits(a.Limits) {
		r.ids = messageIDs(msgs, tx.now)
		hold := db.newReservation(tx, req)
		var p pgAdmission
		if p, err = db.admitPG(ctx, tx, a, a.Limits, msgs, rows, r.ids, hold); err != nil {
			return r, err
		}
		st, next, streamTurn, taken, folded = &p.st, p.next, p.turn, true, true
		if p.held {
			res = hold
		}
	} else {
		// The user's lock first, as every budget write takes it, then
		// the limits; then the lease and the user message's seqs in one
		// statement when the session is as the turn saw it and has
		// room; otherwise one at a time, which tells which refused.
		if st, err = db.lockLimits(ctx, tx, req.UserID, a.Limits); err != nil {
			return r, err
		}
		if next, taken, err = takeTurn(ctx, tx, a, int64(len(msgs))); err != nil {
			return r, err
		}
		if !taken {
			if err := leaseTurn(ctx, tx, a); err != nil {
				return r, err
			}
		}
	}
	if res == nil {
		// Not folded, or the fold's hold refused: the reservation goes
		// the way the budget's state tells (stale holds released, a new
		// period, a free preview, or EBUDGET).
		if res, err = db.reserve(ctx, tx, req, st); err != nil {
			return r, err
		}
	}
	r.adm = &coachd.Admission{Reservation: res, StreamTurn: streamTurn}
	switch {
	case a.Stream != nil && folded:
		err = keepTurns(ctx, tx, req.UserID, req.SessionID, streamTurn, a.Stream.Keep)
	case a.Stream != nil:
		r.adm.StreamTurn, err = beginTurn(ctx, tx, req.UserID, req.SessionID, a.Stream.Owner, a.Stream.Keep)
	}
	if err == nil && a.Stream != nil && a.Stream.Key != "" {
		err = keepTurnKey(ctx, tx, req.UserID, req.SessionID, r.adm.StreamTurn, a.Stream, msgs == nil)
	}
	if err != nil {
		return r, err
	}
	if msgs != nil {
		if taken {
			r.first = next - int64(len(msgs))
			if !folded {
				r.ids, err = insertRows(ctx, tx, req.SessionID, msgs, rows, r.first)
			}
		} else {
			r.ids, r.first, _, err = insertMessages(ctx, tx, req.UserID, req.SessionID, msgs, rows, "", false, nil, 0, "")
		}
		if err != nil {
			return r, err
		}
		r.at = tx.now
	}
	return r, nil
}

// takeTurn takes a's lease and reserves n seqs (none when n is 0) in one
// UPDATE, which matches only while the session has the message count and
// update time a.Seen shows and room for n more; the rest of what the turn
// read of it (sameSession) is compared on the row returned. It reports
// whether it matched, and the session's next seq after it. Nothing is
// changed when it did not: leaseTurn then says why.
func takeTurn(ctx context.Context, tx *tx, a coachd.TurnAdmission, n int64) (int64, bool, error) {
	var next int64
	now, err := scanSessionAnd(tx.queryRow(ctx, takeTurnSQL[tx.d], takeTurnArgs(tx, a, n)...), &next)
	return tookTurn(a, n, now, next, err)
}

// takeTurnSQL[d] is takeTurn's UPDATE in dialect d (takeTurnSet[d], a
// condition may be added to its WHERE, then takeTurnReturning);
// takeTurnArgs its arguments.
var (
	takeTurnSet = [...]string{dialectSQLite: takeTurnSetOf(dialectSQLite), dialectPostgres: takeTurnSetOf(dialectPostgres)}
	takeTurnSQL = [...]string{dialectSQLite: takeTurnSet[dialectSQLite] + takeTurnReturning, dialectPostgres: takeTurnSet[dialectPostgres] + takeTurnReturning}
)

const takeTurnReturning = ` RETURNING ` + sessionColumns + `, next_seq`

func takeTurnSetOf(d dialect) string {
	return `UPDATE sessions SET turn_owner = ?, turn_until = ` + leaseUntil[d] + `,
		next_seq = next_seq + ?, message_count = message_count + ?, updated_at = ?
		WHERE id = ? AND user_id = ? AND ` + leaseFree[d] + `
		AND message_count = ? AND updated_at = ? AND message_count + ? <= ?`
}

func takeTurnArgs(tx *tx, a coachd.TurnAdmission, n int64) []any {
	updated := a.Seen.UpdatedAt // what the WHERE finds: no change without a message
	if n > 0 {
		updated = tx.now
	}
	args := append(make([]any, 0, 13), a.Owner, leaseArg(tx, a.Until), n, n, tx.time(updated), a.Seen.ID, a.Seen.UserID)
	args = leaseFreeArgs(args, tx, a.Owner) // one slice for all 13: this is every new message's admission
	return append(args, a.Seen.MessageCount, tx.time(a.Seen.UpdatedAt), n, coachd.MaxMessagesPerSession)
}

// tookTurn is takeTurn's answer from its UPDATE's row (now, next) or err.
func tookTurn(a coachd.TurnAdmission, n int64, now *coachd.Session, next int64, err error) (int64, bool, error) {
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, false, nil
	case err != nil:
		return 0, false, dbError(err, "acquire turn")
	}
	now.MessageCount -= n
	now.UpdatedAt = a.Seen.UpdatedAt // as the WHERE found it
	if !sameSession(now, a.Seen) {
		return 0, false, coachd.ErrSessionChanged
	}
	return next, true, nil
}

// leaseTurn takes a's lease alone, when takeTurn did not match: the
// session is not the user's (ENOTFOUND), another owner's lease is live
// (ETURNINPROGRESS), the session moved on since the turn read it
// (coachd.ErrSessionChanged); or it is full, which the user message's
// append then says.
func leaseTurn(ctx context.Context, tx *tx, a coachd.TurnAdmission) error {
	now, err := scanSession(tx.queryRow(ctx, `UPDATE sessions SET turn_owner = ?, turn_until = `+leaseUntil[tx.d]+`
		WHERE id = ? AND user_id = ? AND `+leaseFree[tx.d]+`
		RETURNING `+sessionColumns,
		leaseFreeArgs([]any{a.Owner, leaseArg(tx, a.Until), a.Seen.ID, a.Seen.UserID}, tx, a.Owner)...))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := findSession(ctx, tx, a.Seen.UserID, a.Seen.ID); err != nil {
			return err
		}
		return coachd.Errorf(coachd.ETURNINPROGRESS, "a turn is already running on this session")
	case err != nil:
		return dbError(err, "acquire turn")
	case !sameSession(now, a.Seen):
		return coachd.ErrSessionChanged
	}
	return nil
}

// EndTurn appends e.Messages (as AppendMessages), settles the turn's
// reservation (as Settle; none when e.ReservationID is "") and releases
// e.Owner's lease (as ReleaseTurn; none when e.Owner is "") in one write
// transaction, all or nothing; with e.LogKeep it also applies the event
// log's retention (off the admission, which is on the first text's
// path). It returns the settled reservation, nil when there was none,
// and the session as the write that stored e.Messages and released
// e.Owner's lease left it, nil without both.
func (db *DB) EndTurn(ctx context.Context, userID string, e coachd.TurnEnd) (*coachd.Reservation, *coachd.Session, error) {
	s, err := settleSpend(e.Spend, db.budget.Unit)
	if err != nil {
		return nil, nil, err
	}
	rows, err := encodeMessages(e.Messages)
	if err != nil {
		return nil, nil, err
	}
	if err := db.stagedNotes(userID, e.SessionID, e.Notes); err != nil {
		return nil, nil, err
	}
	var ids []string
	var first int64
	var now time.Time
	var sess *coachd.Session
	end := func(tx *tx) (*coachd.Reservation, error) {
		// The user's lock first, as every budget write takes it, and the
		// reservation read after it unless the caller's copy is used: it
		// is settled without a read while it is still the stored one
		// (settleSeen). On Postgres the lock then goes in the statement
		// that stores the messages (insertMessages).
		var r *coachd.Reservation
		var err error
		seen := e.ReservationSeen
		if seen == nil || e.ReservationID == "" || seen.ID != e.ReservationID || seen.UserID != userID {
			seen = nil
		}
		lock := len(e.Messages) > 0 && tx.d == dialectPostgres
		switch {
		case e.ReservationID != "" && seen == nil:
			if r, err = lockReservation(ctx, tx, userID, e.ReservationID); err != nil {
				return nil, err
			}
			lock = false
		case !lock:
			if err := lockUser(ctx, tx, userID); err != nil {
				return nil, err
			}
		}
		// On Postgres the settlement from the caller's copy goes in that
		// statement too, when it changes the user's totals (settleKnown's
		// statement, applyPG's WITHs, after the messages').
		var also *settleFold
		var c resChange
		// What the statement reads back, in one allocation.
		var back struct {
			budget, used, reserved sql.NullInt64
			expires                time.Time
		}
		if lock && seen != nil && len(e.Messages) <= insertBatch {
			if c = db.change(tx, seen, s, e.Mode); !c.none && c.toUser {
				also = &settleFold{args: db.settleArgs(c.updateArgs(tx, seen, true), tx, seen, c),
					dest: []any{&back.budget, &back.used, &back.reserved, timeCol{&back.expires}}}
			}
		}
		released := false
		if len(e.Messages) > 0 {
			// The lease goes in the statement that stores the reply: one
			// round trip fewer on Postgres.
			if ids, first, sess, err = insertMessages(ctx, tx, userID, e.SessionID, e.Messages, rows, e.Owner, lock, also, e.LogTurn, cmp.Or(e.Lease, e.Owner)); err != nil {
				return nil, err
			}
			now, released = tx.now, true
		}
		for _, n := range e.Notes {
			if err := insertNote(ctx, tx, n); err != nil {
				return nil, err
			}
		}
		switch {
		case also != nil:
			known := *seen
			if c.settled(&known, back.budget, back.used, back.reserved, back.expires) {
				r = &known
			} else if r, err = db.settleRead(ctx, tx, seen, s, e.Mode); err != nil {
				return nil, err
			}
		case seen != nil:
			if r, err = db.settleSeen(ctx, tx, seen, s, e.Mode); err != nil {
				return nil, err
			}
		case r != nil:
			if err := db.settleWith(ctx, tx, r, s, e.Mode); err != nil {
				return nil, err
			}
		}
		if e.Owner != "" && !released {
			if err := releaseTurn(ctx, tx, userID, e.SessionID, e.Owner); err != nil {
				return nil, err
			}
		}
		if e.LogKeep > 0 && e.LogTurn > int64(e.LogKeep) {
			if err := pruneTurns(ctx, tx, userID, e.SessionID, e.LogTurn-int64(e.LogKeep)); err != nil {
				return nil, err
			}
		}
		return r, nil
	}
	r, err := writeTx(ctx, db, end)
	if errors.Is(err, errTurnEnded) {
		// The turn's readers gave it up (they told their clients it was
		// interrupted): none of its messages is stored, left as they
		// came, nor the notes its round's tools staged, but the rest is
		// done (its spend settled, its lease released), the write made
		// again without them.
		e.Messages, e.Notes = nil, nil
		r, err = writeTx(ctx, db, end)
	}
	if err != nil {
		return nil, nil, err
	}
	if len(e.Messages) > 0 {
		assignMessages(e.Messages, ids, e.SessionID, first, now)
	}
	return r, sess, nil
}

// sameSession reports whether the stored session now is the one a turn
// started from (seen, TurnAdmission.Seen) in everything the turn reads of
// it. A turn may start from the session its last EndTurn returned, long
// before, so an update time alone (which a frozen or coarse clock can
// repeat) is not trusted to show a change.
func sameSession(now, seen *coachd.Session) bool {
	return now.MessageCount == seen.MessageCount && now.UpdatedAt.Equal(seen.UpdatedAt) && now.Agent == seen.Agent &&
		now.Title == seen.Title && now.Mode == seen.Mode && now.Status == seen.Status && (now.Pending == nil) == (seen.Pending == nil)
}

// turnMessagesSQL reads a session's messages (args: the session twice,
// after) as a turn needs them: a message with attachments older than the
// ones a turn may send is read without their data (content_lite), not as
// megabytes of photos the turn sends as a note. Those it may send are
// the newest messages' while the newer ones hold fewer than
// coachd.MaxHistoryAttachments attachments and MaxHistoryAttachmentBytes
// of them (coachd.AttachmentsMaySend), from the sizes content_lite keeps
// (dialect.attachmentSizes). Their count alone bounded nothing: 20
// full-size photos are 80 MB, four times what a turn sends.
// Each row ends with whether it has no content_lite (scanTurnMessage).
var turnMessagesSQL = [...]string{dialectSQLite: turnMessages(dialectSQLite, "", true), dialectPostgres: turnMessages(dialectPostgres, "", true)}

// forkMessagesSQL reads them so as of the session's first messages (args:
// the session, n, the session, 0, n): what ForkSession copies.
var forkMessagesSQL = [...]string{dialectSQLite: turnMessages(dialectSQLite, " AND seq <= ?", false), dialectPostgres: turnMessages(dialectPostgres, " AND seq <= ?", false)}

// turnMessages is the query of turnMessagesSQL, up to upTo, with the
// flag column when noLite.
func turnMessages(d dialect, upTo string, noLite bool) string {
	count, sent := d.attachmentSizes("l.content_lite")
	from := `(SELECT COALESCE(MIN(w.seq), 0) FROM (SELECT a.seq,
			COALESCE(SUM(a.n) OVER newer, 0) AS newer_n, COALESCE(SUM(a.sent) OVER newer, 0) AS newer_sent
		FROM (SELECT l.seq, ` + count + ` AS n, ` + sent + ` AS sent FROM (SELECT seq, content_lite FROM messages
			WHERE session_id = ?` + upTo + ` AND content_lite IS NOT NULL ORDER BY seq DESC LIMIT ` + strconv.Itoa(coachd.MaxHistoryAttachments) + `) l) a
		WINDOW newer AS (ORDER BY a.seq DESC ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)) w
		WHERE w.newer_n < ` + strconv.Itoa(coachd.MaxHistoryAttachments) + ` AND w.newer_sent < ` + strconv.Itoa(coachd.MaxHistoryAttachmentBytes) + `)`
	cols := strings.Replace(messageColumns, "m.content_json",
		`CASE WHEN m.content_lite IS NOT NULL AND m.seq < `+from+` THEN m.content_lite ELSE m.content_json END`, 1)
	if noLite {
		cols += `, m.content_lite IS NULL`
	}
	return `SELECT ` + cols + ` FROM messages m WHERE m.session_id = ? AND m.seq > ?` + strings.ReplaceAll(upTo, "seq", "m.seq") + ` ORDER BY m.seq`
}

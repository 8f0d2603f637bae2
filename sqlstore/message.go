package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/coachd/coachd"
)

const messageColumns = `m.id, m.session_id, m.seq, m.role, m.content, m.content_json, m.metadata, m.usage_json, m.partial, m.created_at`

// liteColumns are messageColumns with the blocks read without attachment
// data where a message has any (content_lite; a row stored before it
// has none and is read whole).
var liteColumns = strings.Replace(messageColumns, "m.content_json", "COALESCE(m.content_lite, m.content_json)", 1)

// columnsFor are the columns a listing of page reads.
func columnsFor(page coachd.Page) string {
	if page.OmitAttachments {
		return liteColumns
	}
	return messageColumns
}

func scanMessage(row interface{ Scan(...any) error }) (*coachd.Message, error) {
	m := &coachd.Message{}
	var blocks, metadata, usage []byte
	if err := row.Scan(&m.ID, &m.SessionID, &m.Seq, &m.Role, &m.Content, &blocks, &metadata, &usage,
		&m.Partial, timeCol{&m.CreatedAt}); err != nil {
		return nil, err
	}
	if blocks == nil {
		// Rows stored without blocks read back as one text block.
		m.Blocks = []coachd.Block{coachd.TextBlock(m.Content)}
	} else {
		// blocks is the row's own copy (database/sql's Scan copies into a
		// []byte): the blocks keep slices of it.
		var err error
		if m.Blocks, err = coachd.UnmarshalBlocks(blocks); err != nil {
			return nil, internal(err, "message %s: decode content_json", m.ID)
		}
	}
	if metadata != nil {
		m.Metadata = json.RawMessage(metadata)
	}
	if usage != nil {
		m.Usage = &coachd.Usage{}
		if err := json.Unmarshal(usage, m.Usage); err != nil {
			return nil, internal(err, "message %s: decode usage_json", m.ID)
		}
	}
	return m, nil
}

// messageRow is a message's column values, encoded before the transaction
// starts so that a bad message fails the batch without touching the
// database.
type messageRow struct {
	blocks, metadata, usage any // string or nil
	lite                    any // the blocks without attachment data (coachd.OmitAttachmentData), or nil
}

func encodeMessage(i int, m *coachd.Message) (messageRow, error) {
	field := func(name string) string { return fmt.Sprintf("messages[%d].%s", i, name) }
	var r messageRow
	if m.Role != coachd.RoleUser && m.Role != coachd.RoleAssistant {
		return r, coachd.Invalid(coachd.FieldError{Field: field("role"), Message: "must be user or assistant", Code: "enum"})
	}
	if m.ID != "" && !coachd.ValidID(coachd.PrefixMessage, m.ID) {
		return r, coachd.Invalid(coachd.FieldError{Field: field("id"), Message: "must be a message ID", Code: "format"})
	}
	if len(m.Blocks) > 0 {
		b, ok := appendBlocks(make([]byte, 0, blocksSize(m.Blocks)), m.Blocks)
		if !ok {
			var err error
			if b, err = json.Marshal(m.Blocks); err != nil {
				return r, coachd.Invalid(coachd.FieldError{Field: field("content_blocks"), Message: err.Error(), Code: "format"})
			}
		}
		r.blocks = string(b)
		if lite, ok := coachd.OmitAttachmentData(m.Blocks); ok {
			b, err := json.Marshal(lite)
			if err != nil {
				return r, coachd.Invalid(coachd.FieldError{Field: field("content_blocks"), Message: err.Error(), Code: "format"})
			}
			r.lite = string(b)
		}
		if m.Content == "" {
			m.Content = coachd.BlocksText(m.Blocks)
		}
	}
	// content is a plain-text copy of the blocks (which keep the exact
	// text, JSON-escaped). A model may write U+0000, which PostgreSQL TEXT
	// refuses: the copy gets U+FFFD instead, so the turn is still stored
	// (issue 20 finding 6).
	m.Content = strings.ReplaceAll(m.Content, "\x00", "\uFFFD")
	if m.Metadata != nil {
		if !coachd.ValidJSON(m.Metadata) {
			return r, coachd.Invalid(coachd.FieldError{Field: field("metadata"), Message: "must be valid JSON", Code: "format"})
		}
		r.metadata = string(m.Metadata)
	}
	if m.Usage != nil {
		var buf [160]byte
		r.usage = string(appendUsage(buf[:0], m.Usage))
	}
	return r, nil
}

// encodeMessages encodes a batch with encodeMessage, failing on the first
// bad message.
func encodeMessages(msgs []*coachd.Message) ([]messageRow, error) {
	rows := make([]messageRow, len(msgs))
	for i, m := range msgs {
		var err error
		if rows[i], err = encodeMessage(i, m); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// AppendMessages appends msgs to the user's session in one transaction,
// assigning SessionID, Seq, CreatedAt and, when empty, ID, and bumps the
// session's message count. Seqs are contiguous and start at 1. When Content
// is empty it is set to the text of the blocks. A caller-chosen ID that is
// already taken is ECONFLICT.
func (db *DB) AppendMessages(ctx context.Context, userID, sessionID string, msgs []*coachd.Message) error {
	rows, err := encodeMessages(msgs)
	if err != nil {
		return err
	}
	if len(msgs) == 0 {
		_, err := db.FindSession(ctx, userID, sessionID)
		return err
	}
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	ids, first, _, err := insertMessages(ctx, tx, userID, sessionID, msgs, rows, "", false, nil, 0, "")
	if err != nil {
		return err
	}
	if err := tx.commit(); err != nil {
		return err
	}
	// Assign only once committed, so a failed batch leaves msgs as they came
	// (except Content, which is filled in before).
	assignMessages(msgs, ids, sessionID, first, tx.now)
	return nil
}

// insertMessages reserves len(msgs) seqs on the user's session and inserts
// msgs there, leaving msgs untouched. It returns the IDs used (msgs' own or
// new ones) and the first seq. msgs must not be empty. When release is
// not "", the same statement releases release's turn lease on the session
// (as releaseTurn: nothing when someone else holds it) and returns the
// session as it leaves it (nil otherwise). On Postgres up to insertBatch
// messages are inserted by that statement too (appendSQL), and with lock
// it takes the user's lock (lockUser's) first: the caller then must not
// have taken it. With settle as well (up to insertBatch messages) the
// statement then makes that settlement (appendSettleSQL). With fence (a
// turn of the session's event log; 0 for none) the statement stores
// nothing unless that turn has not ended and, when lease is not "", the
// session's lease is still lease's (fenced), and then insertMessages is
// errTurnEnded.
func insertMessages(ctx context.Context, tx *tx, userID, sessionID string, msgs []*coachd.Message, rows []messageRow, release string, lock bool, settle *settleFold, fence int64, lease string) ([]string, int64, *coachd.Session, error) {
	// Reserving the seqs takes the session row's lock on Postgres (and the
	// database write lock on SQLite): concurrent appends queue here.
	n := int64(len(msgs))
	// On Postgres the rows go in the same statement (withMessagesSQL).
	folded := tx.d == dialectPostgres && n <= insertBatch
	if lock && !folded {
		if err := lockUser(ctx, tx, userID); err != nil {
			return nil, 0, nil, err
		}
	}
	k := 0
	args := make([]any, 0, 15+8*len(msgs))
	pgFence := fence > 0 && tx.d == dialectPostgres
	if pgFence {
		args = append(args, sessionID, fence, userID)
	}
	if lock && folded {
		k = 1
		args = append(args, userID)
	}
	args = append(args, n, n, tx.time(tx.now))
	r := 0
	if release != "" {
		r = 1
		args = append(args, release, release)
	}
	args = append(args, sessionID, userID, n, coachd.MaxMessagesPerSession)
	if fence > 0 {
		args = append(args, lease, lease)
	}
	if fence > 0 && !pgFence {
		args = append(args, sessionID, fence, userID)
	}
	qs, ss := &appendSQL, &appendSettleSQL
	if fence > 0 {
		qs, ss = &fencedAppendSQL[tx.d], &fencedSettleSQL[tx.d]
	}
	q := qs[0][r][0]
	var ids []string
	var next int64
	dest := []any{&next}
	if folded {
		ids = messageIDs(msgs, tx.now)
		q = qs[k][r][n]
		args = appendMessageArgs(args, tx, msgs, rows, ids)
		if settle != nil && k == 1 {
			q = ss[r][n]
			args = append(args, settle.args...)
			dest = append(dest, settle.dest...)
		}
	}
	var sess *coachd.Session
	var err error
	if release == "" {
		err = tx.queryRow(ctx, q, args...).Scan(dest...)
	} else {
		sess, err = scanSessionAnd(tx.queryRow(ctx, q, args...), dest...)
	}
	if errors.Is(err, sql.ErrNoRows) {
		if _, ferr := findSession(ctx, tx, userID, sessionID); ferr != nil {
			return nil, 0, nil, ferr
		}
		if fence > 0 {
			if live, err := turnLive(ctx, tx, userID, sessionID, fence, lease); err != nil || !live {
				return nil, 0, nil, cmp.Or(err, errTurnEnded)
			}
		}
		return nil, 0, nil, coachd.Errorf(coachd.ECONFLICT, "the session is full (%d messages): start a new session", coachd.MaxMessagesPerSession)
	}
	if err != nil {
		return nil, 0, nil, dbError(err, "append to session %q", sessionID) // its messages too, on Postgres
	}
	if fence > 0 && !pgFence {
		// A sign of life, as on Postgres (fencePG): a give-up judged
		// before this write (GiveUpTurn's alive_at) is then refused.
		if _, err := tx.exec(ctx, `UPDATE turns SET alive_at = ? WHERE session_id = ? AND turn = ? AND user_id = ?`,
			tx.time(tx.now), sessionID, fence, userID); err != nil {
			return nil, 0, nil, dbError(err, "append to session %q", sessionID)
		}
	}
	first := next - n
	if !folded {
		if ids, err = insertRows(ctx, tx, sessionID, msgs, rows, first); err != nil {
			return nil, 0, nil, err
		}
	}
	return ids, first, sess, nil
}

// appendSQL[k][r][n] is insertMessages' statement: the session's UPDATE
// that reserves the seqs (with the lease's release when r is 1) and, for
// n messages (1 to insertBatch), their rows after it (withMessagesSQL).
// With k 1 (and n at least 1) the user's lock comes first, a WITH whose
// row the UPDATE reads (an init plan, run before the session's row is
// locked), as lockUser orders the two locks. appendWithSQL is such a
// statement's WITHs, and appendRet[r] what it reads of s.
var appendSQL, appendWithSQL, appendRet = func() (qs, ws [2][2][insertBatch + 1]string, rets [2]string) {
	seqs := `UPDATE sessions SET next_seq = next_seq + ?, message_count = message_count + ?, updated_at = ?`
	where := ` WHERE id = ? AND user_id = ? AND message_count + ? <= ?`
	// SET reads the row as it was: both CASEs see the old owner.
	release := `, turn_owner = CASE WHEN turn_owner = ? THEN NULL ELSE turn_owner END,
			turn_until = CASE WHEN turn_owner = ? THEN NULL ELSE turn_until END`
	rets = [2]string{`next_seq`, sessionColumns + `, next_seq`}
	for k, lock := range []string{``, `k AS (SELECT id FROM users WHERE id = ? FOR UPDATE), `} {
		cond := ``
		if k == 1 {
			cond = ` AND EXISTS (SELECT 1 FROM k)`
		}
		for r, upd := range []string{seqs + where + cond, seqs + release + where + cond} {
			withRet := `id, next_seq` // withMessagesSQL reads the row's id
			if r == 1 {
				withRet = rets[r]
			}
			if k == 0 {
				qs[k][r][0] = upd + ` RETURNING ` + rets[r]
			}
			for n := 1; n <= insertBatch; n++ {
				ws[k][r][n] = `WITH ` + lock + `s AS (` + upd + ` RETURNING ` + withRet + `)` + withMessagesSQL[n]
				qs[k][r][n] = ws[k][r][n] + ` SELECT ` + rets[r] + ` FROM s`
			}
		}
	}
	return qs, ws, rets
}()

// settleFold is a settlement from the caller's copy of a reservation
// that insertMessages' statement makes after its messages: its args
// (settleArgs of settleSQL[1]'s), and where the user's totals it reads
// back go (settleColumns: NULL when the reservation was not as known).
type settleFold struct{ args, dest []any }

// appendSettleSQL[r][n] is appendSQL[1][r][n] going on with a
// settleFold's WITHs (settleWiths), the reservation's UPDATE also on
// condition that the session's matched.
var appendSettleSQL = func() (qs [2][insertBatch + 1]string) {
	for r := range qs {
		for n := 1; n <= insertBatch; n++ {
			qs[r][n] = appendWithSQL[1][r][n] + `, ` + settleWiths(settleSQL[dialectPostgres][1]+` AND EXISTS (SELECT 1 FROM s)`) +
				` SELECT ` + appendRet[r] + `, ` + settleColumns + ` FROM s LEFT JOIN u ON true`
		}
	}
	return qs
}()

// insertRows inserts msgs at seqs first, first+1, … of the session, whose
// seqs the caller reserved, and returns the IDs used (msgs' own or new
// ones).
func insertRows(ctx context.Context, tx *tx, sessionID string, msgs []*coachd.Message, rows []messageRow, first int64) ([]string, error) {
	ids := messageIDs(msgs, tx.now)
	// A few rows per statement (a tool round is two messages): one
	// statement, and on Postgres one round trip, instead of one each.
	for start := 0; start < len(msgs); start += insertBatch {
		batch := msgs[start:min(start+insertBatch, len(msgs))]
		args := make([]any, 0, 11*len(batch))
		for j, m := range batch {
			i := start + j
			args = append(args, ids[i], sessionID, first+int64(i), string(m.Role), m.Content, rows[i].blocks, rows[i].metadata,
				rows[i].usage, m.Partial, tx.time(tx.now), rows[i].lite)
		}
		if _, err := tx.exec(ctx, insertMessagesSQL[len(batch)], args...); err != nil {
			return nil, dbError(err, "append messages[%d:%d]", start, start+len(batch))
		}
	}
	return ids, nil
}

// messageIDs is msgs' ids: each one's own, or a new one made at now.
func messageIDs(msgs []*coachd.Message, now time.Time) []string {
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.ID
		if ids[i] == "" {
			ids[i] = coachd.NewID(coachd.PrefixMessage, now)
		}
	}
	return ids
}

// insertBatch bounds the messages of one INSERT (11 parameters each).
const insertBatch = 4

// insertMessagesSQL[n] inserts n messages.
var insertMessagesSQL = func() (qs [insertBatch + 1]string) {
	row := "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
	for n := 1; n <= insertBatch; n++ {
		qs[n] = messageInsert + ` VALUES ` + strings.Repeat(row+", ", n-1) + row
	}
	return qs
}()

// messageInsert is the start of a message's INSERT, its columns in the
// order of insertRows' values.
const messageInsert = `INSERT INTO messages (id, session_id, seq, role, content, content_json, metadata, usage_json, partial, created_at, content_lite)`

// assignMessages fills in what insertMessages stored for msgs.
func assignMessages(msgs []*coachd.Message, ids []string, sessionID string, first int64, now time.Time) {
	for i, m := range msgs {
		m.ID, m.SessionID, m.Seq, m.CreatedAt = ids[i], sessionID, first+int64(i), now
	}
}

// ListMessages returns the session's messages in seq order after the
// cursor (the seq of the last message of the previous page), or before
// page.Before (listMessagesBefore).
func (db *DB) ListMessages(ctx context.Context, userID, sessionID string, page coachd.Page) ([]*coachd.Message, string, error) {
	if page.Before != "" {
		return db.listMessagesBefore(ctx, userID, sessionID, page)
	}
	after, err := decodeSeqCursor(page.Cursor)
	if err != nil {
		return nil, "", err
	}
	limit := pageLimit(page)
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, "", err
	}
	defer tx.Rollback()
	msgs, full, err := listMessages(ctx, tx, userID, sessionID, columnsFor(page), after, limit+1, maxPageBytes)
	if err != nil {
		return nil, "", err
	}
	cursor := func(m *coachd.Message) string { return strconv.FormatInt(m.Seq, 10) }
	if full && len(msgs) <= limit {
		return msgs, cursor(msgs[len(msgs)-1]), tx.commit()
	}
	msgs, next := pageOf(msgs, limit, cursor)
	return msgs, next, tx.commit()
}

// maxPageBytes ends a page of ListMessages early (with a cursor to the
// rest): a user message holds its attachments, up to 10 MiB of them as
// base64, so a page of 200 could be gigabytes read, held and encoded at
// once. A page always holds at least one message.
const maxPageBytes = 32 << 20

// History returns all of the session's messages in seq order: what the
// runner sends to the model.
func (db *DB) History(ctx context.Context, userID, sessionID string) ([]*coachd.Message, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	msgs, _, err := listMessages(ctx, tx, userID, sessionID, messageColumns, 0, 0, 0)
	if err != nil {
		return nil, err
	}
	return msgs, tx.commit()
}

// listMessages reads cols of up to limit messages (all when limit is 0)
// after seq, and stops early, full, once they hold maxBytes (0: no bound;
// see Message.Bytes). The join scopes the read to the user, so only an empty
// result needs a second look to tell a session without more messages (an
// empty list) from a missing or foreign one (ENOTFOUND).
func listMessages(ctx context.Context, tx *tx, userID, sessionID, cols string, after int64, limit, maxBytes int) (msgs []*coachd.Message, full bool, err error) {
	q := `SELECT ` + cols + ` FROM messages m JOIN sessions s ON s.id = m.session_id
		WHERE m.session_id = ? AND s.user_id = ? AND m.seq > ? ORDER BY m.seq`
	args := []any{sessionID, userID, after}
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	return queryMessages(ctx, tx, userID, sessionID, maxBytes, q, args...)
}

// queryMessages reads the messages q selects (messageColumns) of the
// user's session, stopping once they hold maxBytes (0: no bound; full
// says it stopped so). None at all is ENOTFOUND when the session is not
// the user's.
func queryMessages(ctx context.Context, tx *tx, userID, sessionID string, maxBytes int, q string, args ...any) (msgs []*coachd.Message, full bool, err error) {
	rows, err := tx.query(ctx, q, args...)
	if err != nil {
		return nil, false, dbError(err, "list messages")
	}
	defer rows.Close()
	msgs, size := []*coachd.Message{}, 0
	for !full && rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, false, dbError(err, "list messages")
		}
		msgs = append(msgs, m)
		size += m.Bytes()
		full = maxBytes > 0 && size >= maxBytes
	}
	if err := rows.Err(); err != nil {
		return nil, false, dbError(err, "list messages")
	}
	if len(msgs) > 0 {
		return msgs, full, nil
	}
	if _, err := findSession(ctx, tx, userID, sessionID); err != nil {
		return nil, false, err
	}
	return msgs, false, nil
}

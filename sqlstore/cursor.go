package sqlstore

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/coachd/coachd"
)

// Cursors are opaque to callers: base64url (no padding) of ":"-separated
// fields. Message cursors are the plain base-10 seq of the last message.

func encodeCursor(fields ...string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strings.Join(fields, ":")))
}

// decodeCursor returns the n fields of cursor; the last field may contain
// ":" (it is an ID, which never does, but nothing breaks if it did).
func decodeCursor(cursor string, n int) ([]string, error) {
	// The decoder skips '\r' and '\n' anywhere, even in Strict mode, so
	// without this check one position would have many cursors.
	if strings.ContainsAny(cursor, "\r\n") {
		return nil, badCursor()
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(cursor)
	if err != nil {
		return nil, badCursor()
	}
	fields := strings.SplitN(string(b), ":", n)
	if len(fields) != n {
		return nil, badCursor()
	}
	return fields, nil
}

// badCursor is the error of a cursor no store handed out: the shape of
// every other bad query parameter's, its field and code named.
func badCursor() error {
	return coachd.Invalid(coachd.FieldError{Field: "cursor", Message: "is not a cursor this server returned", Code: "format"})
}

// seqCursor is the position after a message.
func decodeSeqCursor(cursor string) (int64, error) {
	if cursor == "" {
		return 0, nil
	}
	seq, ok := parseInt(cursor)
	if !ok || seq < 1 {
		return 0, badCursor()
	}
	return seq, nil
}

// timeIDCursor is the position after a session in newest-first order.
type timeIDCursor struct {
	micros int64
	id     string
}

func (c timeIDCursor) String() string {
	return encodeCursor(strconv.FormatInt(c.micros, 10), c.id)
}

func decodeTimeIDCursor(cursor, prefix string) (timeIDCursor, error) {
	f, err := decodeCursor(cursor, 2)
	if err != nil {
		return timeIDCursor{}, err
	}
	micros, ok := parseMicros(f[0])
	if !ok || !coachd.ValidID(prefix, f[1]) {
		return timeIDCursor{}, badCursor()
	}
	return timeIDCursor{micros, f[1]}, nil
}

// idCursor is the position after a row in ID order.
func decodeIDCursor(cursor, prefix string) (string, error) {
	f, err := decodeCursor(cursor, 1)
	if err != nil {
		return "", err
	}
	if !coachd.ValidID(prefix, f[0]) {
		return "", badCursor()
	}
	return f[0], nil
}

// noteCursor is the position after a note in listing order (pinned,
// importance, created_at, id; all descending).
type noteCursor struct {
	pinned     bool
	importance int
	micros     int64
	id         string
}

func (c noteCursor) String() string {
	p := "0"
	if c.pinned {
		p = "1"
	}
	return encodeCursor(p, strconv.Itoa(c.importance), strconv.FormatInt(c.micros, 10), c.id)
}

func decodeNoteCursor(cursor string) (noteCursor, error) {
	f, err := decodeCursor(cursor, 4)
	if err != nil {
		return noteCursor{}, err
	}
	imp, ok1 := parseInt(f[1])
	micros, ok2 := parseMicros(f[2])
	if (f[0] != "0" && f[0] != "1") || !ok1 || !ok2 || imp != int64(int32(imp)) || !coachd.ValidID(coachd.PrefixNote, f[3]) {
		return noteCursor{}, badCursor()
	}
	return noteCursor{f[0] == "1", int(imp), micros, f[3]}, nil
}

// parseInt parses a base-10 integer in its one canonical spelling (no
// sign on positives, no leading zeros), so each cursor names one position.
func parseInt(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && strconv.FormatInt(n, 10) == s
}

// parseMicros parses a cursor's time (parseInt) within the years 1 to
// 9999, which every stored row's is: beyond them Postgres cannot take the
// time as an argument (timestamp out of range, or pgx's microseconds
// overflow) while SQLite compares it as a number, so a forged cursor
// would be an internal error on one and a page on the other.
func parseMicros(s string) (int64, bool) {
	n, ok := parseInt(s)
	return n, ok && n >= minCursorMicros && n < maxCursorMicros
}

var (
	minCursorMicros = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	maxCursorMicros = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
)

// pageLimit applies the default and the maximum.
func pageLimit(p coachd.Page) int {
	switch {
	case p.Limit <= 0:
		return coachd.DefaultPageLimit
	case p.Limit > coachd.MaxPageLimit:
		return coachd.MaxPageLimit
	}
	return p.Limit
}

// newestFirst completes q (a SELECT … WHERE with its args) to read a page
// of rows newest first by (created_at, id), after page's time-and-id
// cursor of the given id prefix: one row more than limit, which says
// whether there is a next page.
func (db *DB) newestFirst(q string, args []any, prefix string, page coachd.Page) (string, []any, int, error) {
	limit := pageLimit(page)
	if page.Cursor != "" {
		c, err := decodeTimeIDCursor(page.Cursor, prefix)
		if err != nil {
			return "", nil, 0, err
		}
		at := db.dialect.timeArg(time.UnixMicro(c.micros))
		q += ` AND (created_at < ? OR (created_at = ? AND id < ?))`
		args = append(args, at, at, c.id)
	}
	return q + ` ORDER BY created_at DESC, id DESC LIMIT ?`, append(args, limit+1), limit, nil
}

// listNewestFirst pages through a user's rows of table, newest first by
// (created_at, id), with time-and-id cursors of the given id prefix.
func listNewestFirst[T any](ctx context.Context, db *DB, what, table, columns, prefix string,
	scan func(interface{ Scan(...any) error }) (T, error), key func(T) timeIDCursor, userID string, page coachd.Page) ([]T, string, error) {
	q, args, limit, err := db.newestFirst(`SELECT `+columns+` FROM `+table+` WHERE user_id = ?`, []any{userID}, prefix, page)
	if err != nil {
		return nil, "", err
	}
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, "", err
	}
	defer tx.Rollback()
	list, err := queryAll(ctx, tx, what, scan, q, args...)
	if err != nil {
		return nil, "", err
	}
	list, next := pageOf(list, limit, func(v T) string { return key(v).String() })
	return list, next, tx.commit()
}

package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/coachd/coachd"
)

// loggedEvent is an event as the log keeps it: the event and its error,
// which coachd.Event leaves out of its JSON.
type loggedEvent struct {
	coachd.Event
	Error *loggedError `json:"error,omitempty"`
}

type loggedError struct {
	Code         string              `json:"code"`
	Message      string              `json:"message"`
	Details      []coachd.FieldError `json:"details,omitempty"`
	Retryable    bool                `json:"retryable,omitempty"`
	RetryAfterMS int64               `json:"retry_after_ms,omitempty"`
	Extra        map[string]any      `json:"extra,omitempty"`
}

// logged is ev as the log keeps it.
func logged(ev coachd.Event) loggedEvent {
	le := loggedEvent{Event: ev}
	if e := ev.Err; e != nil {
		le.Error = &loggedError{Code: e.Code, Message: e.Message, Details: e.Details, Retryable: e.Retryable,
			RetryAfterMS: e.RetryAfter.Milliseconds(), Extra: e.Extra}
	}
	return le
}

// encodeEvents encodes a batch of events as the log keeps it: each as
// json.Marshal(logged(ev)) on a line of its own, in one buffer sized up
// front (a turn's deltas are most of the log). No encoded event holds a
// newline (JSON escapes it in a string and has none outside), so the
// lines are the events (decodeBatch).
func encodeEvents(events []coachd.Event) (string, error) {
	if len(events) == 0 {
		return "", nil
	}
	var b strings.Builder
	b.Grow(len(events) * eventSize)
	var enc *json.Encoder // for the events appendEvent leaves
	var scratch [512]byte
	for _, ev := range events {
		if line, ok := appendEvent(scratch[:0], ev); ok {
			b.Write(append(line, '\n'))
			continue
		}
		if enc == nil {
			enc = json.NewEncoder(&b) // HTML escaping on, as json.Marshal; ends each event with \n
		}
		le := logged(ev)
		if err := enc.Encode(&le); err != nil {
			return "", err
		}
	}
	data := b.String()
	return data[:len(data)-1], nil
}

// eventSize is about the length of a logged text delta, the usual event.
const eventSize = 128

func decodeEvent(b []byte) (coachd.Event, error) {
	var le loggedEvent
	if err := json.Unmarshal(b, &le); err != nil {
		return coachd.Event{}, err
	}
	ev := le.Event
	if e := le.Error; e != nil {
		ev.Err = &coachd.Error{Code: e.Code, Message: e.Message, Details: e.Details, Retryable: e.Retryable,
			RetryAfter: time.Duration(e.RetryAfterMS) * time.Millisecond, Extra: e.Extra}
	}
	return ev, nil
}

// decodeBatch decodes the events of a logged batch (encodeEvents).
func decodeBatch(data string, each func(coachd.Event) bool) error {
	for data != "" {
		line, rest, _ := strings.Cut(data, "\n")
		ev, err := decodeEvent([]byte(line))
		if err != nil {
			return err
		}
		if !each(ev) {
			return nil
		}
		data = rest
	}
	return nil
}

// BeginTurn implements coachd.StreamService: the next turn number comes
// from the log itself, in the same statement that records the turn (the
// session's turn lease keeps two turns of one session from racing).
func (db *DB) BeginTurn(ctx context.Context, userID, sessionID, owner string, keep int) (int64, error) {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	turn, err := beginTurn(ctx, tx, userID, sessionID, owner, keep)
	if err != nil {
		return 0, err
	}
	return turn, tx.commit()
}

// beginTurn is BeginTurn in the caller's write transaction.
func beginTurn(ctx context.Context, tx *tx, userID, sessionID, owner string, keep int) (int64, error) {
	// One statement: the session must be the user's (no row otherwise:
	// not found), and the number follows the session's last turn.
	var turn int64
	args := append(turnInsertArgs(tx, owner), sessionID, userID)
	if err := tx.queryRow(ctx, turnInsert[tx.d]+` FROM sessions s WHERE s.id = ? AND s.user_id = ?
		RETURNING turn`, args...).Scan(&turn); err != nil {
		return 0, dbError(err, "begin turn: session %s", sessionID)
	}
	return turn, keepTurns(ctx, tx, userID, sessionID, turn, keep)
}

// turnInsert logs a new turn of the session s (the FROM that follows
// names it), by dialect: numbered after its last, or after the last one
// the log's pruning by age deleted (sessions.turn_floor, PruneEvents) when
// that is higher, so no number comes twice; with the owner and its start
// (and first sign of life) as arguments (turnInsertArgs). On Postgres s
// may be the admission's UPDATE of the session (admitSQL), which returns
// no floor: the floor is read from the table (the UPDATE does not change
// it); and the signs of life are the database's clock (appendEventsPG).
var turnInsert = [...]string{
	dialectSQLite: turnInsertInto + `MAX(COALESCE((SELECT MAX(t.turn) FROM turns t WHERE t.session_id = s.id), 0), s.turn_floor) + 1` + `, s.user_id, ?, ?, ?`,
	dialectPostgres: turnInsertInto + `GREATEST((SELECT MAX(t.turn) FROM turns t WHERE t.session_id = s.id),
		(SELECT f.turn_floor FROM sessions f WHERE f.id = s.id), 0) + 1` + `, s.user_id, ?, ?, clock_timestamp()`,
}

const turnInsertInto = `INSERT INTO turns (session_id, turn, user_id, owner, started_at, alive_at)
	SELECT s.id, `

// turnInsertArgs is turnInsert's arguments for a turn of owner.
func turnInsertArgs(tx *tx, owner string) []any {
	now := tx.time(tx.now)
	if tx.d == dialectPostgres {
		return []any{owner, now}
	}
	return []any{owner, now, now}
}

// keepTurns applies the retention per session to a turn begun: the
// events of the last keep turns (all when keep is 0) stay.
func keepTurns(ctx context.Context, tx *tx, userID, sessionID string, turn int64, keep int) error {
	if keep > 0 && turn > int64(keep) {
		return pruneTurns(ctx, tx, userID, sessionID, turn-int64(keep))
	}
	return nil
}

// pruneTurns deletes the user's session's logged turns up to turn, and
// their events.
func pruneTurns(ctx context.Context, tx *tx, userID, sessionID string, turn int64) error {
	if _, err := tx.exec(ctx, `DELETE FROM turns WHERE session_id = ? AND user_id = ? AND turn <= ?`, sessionID, userID, turn); err != nil {
		return dbError(err, "prune turns")
	}
	return nil
}

// AppendEvents implements coachd.StreamService. The batch is one row of
// the log, keyed by its last event's seq: a turn flushes dozens of deltas
// at a time, and a row per event cost an index insert per event. A flush
// retried after a failure whose write did land logs a second row that
// repeats the first's events and more; Events returns each event once.
func (db *DB) AppendEvents(ctx context.Context, userID, sessionID string, turn int64, events []coachd.Event, ended bool) (bool, error) {
	// Encoded before the writer is taken: the writer's lock is what
	// concurrent turns queue for.
	data, err := encodeEvents(events)
	if err != nil {
		return false, internal(err, "encode event")
	}
	var last int64
	if n := len(events); n > 0 {
		last = events[n-1].Seq
	}
	if db.dialect == dialectPostgres {
		return db.appendEventsPG(ctx, userID, sessionID, turn, last, data, ended)
	}
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	// The batch goes in only while the turn has not ended (before the
	// UPDATE below may end it): a turn its readers gave up (its
	// interrupted ending logged, stream.Hub) whose process was only
	// stalled must not log more of it after that end.
	if len(events) > 0 {
		if _, err := tx.exec(ctx, `INSERT INTO turn_events (session_id, turn, last_seq, data)
			SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM turns WHERE session_id = ? AND turn = ? AND user_id = ? AND NOT ended)
			ON CONFLICT (session_id, turn, last_seq) DO NOTHING`, sessionID, turn, last, data, sessionID, turn, userID); err != nil {
			return false, dbError(err, "append events")
		}
	}
	// The turn is told to stop also when its readers gave it up before
	// this write (it ended, and this is not its end): RETURNING sees the
	// row as updated, where ended is the old one unless this write ends
	// it.
	var stop bool
	if err := tx.queryRow(ctx, `UPDATE turns SET alive_at = ?, ended = ended OR ?
		WHERE session_id = ? AND turn = ? AND user_id = ? RETURNING stop_requested OR (ended AND NOT ?)`,
		tx.time(tx.now), ended, sessionID, turn, userID, ended).Scan(&stop); err != nil {
		return false, dbError(err, "append events")
	}
	return stop, tx.commit()
}

// appendEventsPG is AppendEvents on Postgres in one statement, so one
// round trip without BEGIN and COMMIT (a statement is atomic by itself):
// the turn's row is marked alive and the batch goes in only when that row
// is the user's.
func (db *DB) appendEventsPG(ctx context.Context, userID, sessionID string, turn, last int64, data string, ended bool) (bool, error) {
	tx, err := db.beginAuto(ctx, true)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	var stop bool
	// o is the turn before the UPDATE (every part of one statement sees
	// the same snapshot): the batch goes in only while the turn has not
	// ended, as on SQLite, and a turn that had ended (its readers gave it
	// up) is told to stop.
	if err := tx.queryRow(ctx, `WITH o AS (
			SELECT ended FROM turns WHERE session_id = ? AND turn = ? AND user_id = ?
		), t AS (
			UPDATE turns SET alive_at = clock_timestamp(), ended = ended OR ?
			WHERE session_id = ? AND turn = ? AND user_id = ? RETURNING session_id, turn, stop_requested
		), e AS (
			INSERT INTO turn_events (session_id, turn, last_seq, data)
			SELECT t.session_id, t.turn, ?, ? FROM t, o WHERE ? AND NOT o.ended
			ON CONFLICT (session_id, turn, last_seq) DO NOTHING
		)
		SELECT t.stop_requested OR (o.ended AND NOT ?) FROM t, o`,
		sessionID, turn, userID, ended, sessionID, turn, userID, last, data, data != "", ended).Scan(&stop); err != nil {
		return false, dbError(err, "append events")
	}
	return stop, tx.commit()
}

// Events implements coachd.StreamService. It reads the rows (batches)
// from the one holding the first event after after, and returns their
// events in order, each once, up to limit. A batch's events rise in seq
// and a row is keyed by its last, so each row read holds an event not
// returned yet: fewer than limit events means the log has no more.
func (db *DB) Events(ctx context.Context, userID, sessionID string, after coachd.EventID, limit int) ([]coachd.Event, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	rows, err := tx.query(ctx, `SELECT e.turn, e.data FROM turn_events e JOIN turns t ON t.session_id = e.session_id AND t.turn = e.turn
		WHERE e.session_id = ? AND t.user_id = ? AND (e.turn > ? OR (e.turn = ? AND e.last_seq > ?))
		ORDER BY e.turn, e.last_seq LIMIT ?`, sessionID, userID, after.Turn, after.Turn, after.Seq, limit)
	if err != nil {
		return nil, dbError(err, "list events")
	}
	defer rows.Close()
	var out []coachd.Event
	cur := after // the last event returned
	for len(out) < limit && rows.Next() {
		var turn int64
		var data string
		if err := rows.Scan(&turn, &data); err != nil {
			return nil, dbError(err, "list events")
		}
		err := decodeBatch(data, func(ev coachd.Event) bool {
			// A flush retried after its write landed repeats the
			// events of the row before it.
			if turn == cur.Turn && ev.Seq <= cur.Seq {
				return true
			}
			ev.Turn, cur = turn, coachd.EventID{Turn: turn, Seq: ev.Seq}
			out = append(out, ev)
			return len(out) < limit
		})
		if err != nil {
			return nil, internal(err, "decode event")
		}
	}
	return out, dbError(rows.Err(), "list events")
}

// LatestTurn implements coachd.StreamService.
func (db *DB) LatestTurn(ctx context.Context, userID, sessionID string) (coachd.TurnLog, error) {
	return db.turnLog(ctx, userID, sessionID, true, `ORDER BY turn DESC LIMIT 1`)
}

// TurnLogAt implements coachd.StreamService.
func (db *DB) TurnLogAt(ctx context.Context, userID, sessionID string, turn int64) (coachd.TurnLog, error) {
	return db.turnLog(ctx, userID, sessionID, false, `AND turn = ?`, turn)
}

// turnLog reads the session's turn that the SQL which follows its WHERE
// (and args) picks; Turn 0 when there is none, ENOTFOUND when the session
// is not the user's. With floor, when the log has no turn left, it is the
// last turn pruning by age deleted (sessions.turn_floor), ended.
func (db *DB) turnLog(ctx context.Context, userID, sessionID string, floor bool, pick string, args ...any) (coachd.TurnLog, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return coachd.TurnLog{}, err
	}
	defer tx.Rollback()
	var t coachd.TurnLog
	// Silent is by the clock that stamped alive_at: on Postgres the
	// database's, the one clock replicas share. It counts from the
	// server's start at the earliest: while it was down (a restart) no
	// turn could show life, and a turn alive all along, its next write
	// a moment away, is not given up for it.
	now, col := tx.now, ``
	var up time.Time
	dest := []any{&t.Turn, &t.Owner, timeCol{&t.StartedAt}, timeCol{&t.AliveAt}, &t.Ended, &t.StopRequested}
	if tx.d == dialectPostgres {
		col, dest = `, clock_timestamp(), pg_postmaster_start_time()`, append(dest, timeCol{&now}, timeCol{&up})
	}
	err = tx.queryRow(ctx, `SELECT turn, owner, started_at, alive_at, ended, stop_requested`+col+` FROM turns
		WHERE session_id = ? AND user_id = ? `+pick, append([]any{sessionID, userID}, args...)...).Scan(dest...)
	t.Silent = max(now.Sub(t.AliveAt), 0)
	if up.After(t.AliveAt) {
		t.Silent = max(now.Sub(up), 0)
	}
	if errors.Is(err, sql.ErrNoRows) {
		var n int64
		err := tx.queryRow(ctx, `SELECT turn_floor FROM sessions WHERE id = ? AND user_id = ?`, sessionID, userID).Scan(&n)
		if err != nil {
			return coachd.TurnLog{}, dbError(err, "session %q", sessionID)
		}
		if floor && n > 0 {
			return coachd.TurnLog{Turn: n, Ended: true}, nil
		}
		return coachd.TurnLog{}, nil
	}
	return t, dbError(err, "turn log")
}

// RequestStop implements coachd.StreamService.
func (db *DB) RequestStop(ctx context.Context, userID, sessionID string) error {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	res, err := tx.exec(ctx, `UPDATE turns SET stop_requested = ? WHERE session_id = ? AND user_id = ? AND NOT ended
		AND turn = (SELECT MAX(turn) FROM turns WHERE session_id = ?)`, true, sessionID, userID, sessionID)
	if err != nil {
		return dbError(err, "request stop")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		if _, err := findSession(ctx, tx, userID, sessionID); err != nil {
			return err
		}
		return &coachd.Error{Code: coachd.ENOTFOUND, Message: "no turn is running on this session", Err: coachd.ErrNoTurnRunning}
	}
	return tx.commit()
}

// PruneEvents implements coachd.StreamService.
func (db *DB) PruneEvents(ctx context.Context, before time.Time) (int, error) {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	// Each session whose turns go keeps the number of its last (the
	// next is numbered after it, turnInsert), then they go with their
	// events.
	const aged = `started_at < ? AND (ended OR alive_at < ?)`
	at := tx.time(storeTime(before))
	if _, err := tx.exec(ctx, `UPDATE sessions SET turn_floor = (SELECT MAX(t.turn) FROM turns t WHERE t.session_id = sessions.id)
		WHERE id IN (SELECT session_id FROM turns WHERE `+aged+`)`, at, at); err != nil {
		return 0, dbError(err, "prune events")
	}
	// Only turns at or below the number kept: on Postgres this statement
	// sees a later snapshot than the one above, where a turn may have
	// aged (ended) meanwhile without its number kept; it goes next time.
	res, err := tx.exec(ctx, `DELETE FROM turns WHERE `+aged+`
		AND turn <= (SELECT s.turn_floor FROM sessions s WHERE s.id = turns.session_id)`, at, at)
	if err != nil {
		return 0, dbError(err, "prune events")
	}
	if _, err := tx.exec(ctx, `DELETE FROM stream_tokens WHERE `+holdOver[tx.d], leaseOverArgs(nil, tx)...); err != nil {
		return 0, dbError(err, "prune stream tokens")
	}
	n, _ := res.RowsAffected()
	return int(n), tx.commit()
}

// CreateStreamToken implements coachd.StreamService. A token is timed as
// a reservation's hold is (holdOver): on Postgres by the database's
// clock, its expiry written as its length from it, since a replica
// behind the minting one took a token past its expiry and one ahead
// refused a live one.
func (db *DB) CreateStreamToken(ctx context.Context, userID, sessionID, tokenHash string, expires time.Time) error {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := findSession(ctx, tx, userID, sessionID); err != nil {
		return err
	}
	if _, err := tx.exec(ctx, `INSERT INTO stream_tokens (token_hash, user_id, session_id, expires_at) VALUES (?, ?, ?, `+leaseUntil[tx.d]+`)`,
		tokenHash, userID, sessionID, leaseArg(tx, expires)); err != nil {
		return dbError(err, "create stream token")
	}
	return tx.commit()
}

// StreamTokenUser implements coachd.StreamService.
func (db *DB) StreamTokenUser(ctx context.Context, tokenHash, sessionID string) (*coachd.User, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var userID string
	err = tx.queryRow(ctx, `SELECT user_id FROM stream_tokens WHERE token_hash = ? AND session_id = ? AND NOT `+holdOver[tx.d],
		leaseOverArgs([]any{tokenHash, sessionID}, tx)...).Scan(&userID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, coachd.Errorf(coachd.EUNAUTHORIZED, "the stream token is unknown, expired or for another session: mint a new one")
	}
	if err != nil {
		return nil, dbError(err, "stream token")
	}
	return db.findUser(ctx, tx, userID)
}

// StreamTokenKept implements coachd.StreamService.
func (db *DB) StreamTokenKept(ctx context.Context, tokenHash, sessionID string) (bool, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	var one int
	err = tx.queryRow(ctx, `SELECT 1 FROM stream_tokens WHERE token_hash = ? AND session_id = ?`, tokenHash, sessionID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, dbError(err, "stream token")
}

package sqlstore

import (
	"context"
	"encoding/json"

	"github.com/coachd/coachd"
)

const sessionColumns = `id, user_id, agent, title, mode, status, pending_json, message_count, created_at, updated_at`

func scanSession(row interface{ Scan(...any) error }) (*coachd.Session, error) {
	return scanSessionAnd(row)
}

// scanSessionAnd scans sessionColumns, then the row's further columns
// into more.
func scanSessionAnd(row interface{ Scan(...any) error }, more ...any) (*coachd.Session, error) {
	s := &coachd.Session{}
	var pending []byte
	if err := row.Scan(append([]any{&s.ID, &s.UserID, &s.Agent, &s.Title, &s.Mode, &s.Status, &pending,
		&s.MessageCount, timeCol{&s.CreatedAt}, timeCol{&s.UpdatedAt}}, more...)...); err != nil {
		return nil, err
	}
	if len(pending) > 0 {
		s.Pending = &coachd.PendingInteraction{}
		if err := json.Unmarshal(pending, s.Pending); err != nil {
			return nil, internal(err, "session %s: decode pending interaction", s.ID)
		}
	}
	return s, nil
}

// CreateSession stores s for s.UserID, assigning ID and timestamps and
// defaulting Status to active. An unknown user is ENOTFOUND.
func (db *DB) CreateSession(ctx context.Context, s *coachd.Session) error {
	if s.Status == "" {
		s.Status = coachd.SessionActive
	}
	var errs []coachd.FieldError
	if s.UserID == "" {
		errs = append(errs, coachd.FieldError{Field: "user_id", Message: "must not be empty", Code: "required"})
	}
	if !s.Status.Valid() {
		errs = append(errs, coachd.FieldError{Field: "status", Message: "must be one of active, completed, expired", Code: "enum"})
	}
	if len(errs) > 0 {
		return coachd.Invalid(errs...)
	}
	pending, err := pendingJSON(s.Pending)
	if err != nil {
		return err
	}
	return userTx(ctx, db, s.UserID, func(tx *tx) error {
		return db.createSession(ctx, tx, s, pending)
	})
}

// createSession inserts s after the per-user cap check; the caller holds
// the user's lock, so concurrent creates are counted one after another.
func (db *DB) createSession(ctx context.Context, tx *tx, s *coachd.Session, pending any) error {
	if _, err := db.findUser(ctx, tx, s.UserID); err != nil {
		return err
	}
	var n int64
	if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM sessions WHERE user_id = ?`, s.UserID).Scan(&n); err != nil {
		return dbError(err, "count sessions")
	}
	if n >= coachd.MaxSessionsPerUser {
		return coachd.Errorf(coachd.ECONFLICT, "session limit reached (%d sessions, edited and regenerated copies included): delete old ones first with DELETE /v1/sessions/{id} (GET /v1/sessions lists them)", coachd.MaxSessionsPerUser)
	}
	s.ID = coachd.NewID(coachd.PrefixSession, tx.now)
	s.MessageCount = 0
	s.CreatedAt, s.UpdatedAt = tx.now, tx.now
	if _, err := tx.exec(ctx, `INSERT INTO sessions (id, user_id, agent, title, mode, status, pending_json, message_count, next_seq, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, 0, 1, ?, ?)`,
		s.ID, s.UserID, s.Agent, s.Title, s.Mode, string(s.Status), pending, tx.time(s.CreatedAt), tx.time(s.UpdatedAt)); err != nil {
		return dbError(err, "create session")
	}
	return nil
}

// FindSession returns the user's session, or ENOTFOUND.
func (db *DB) FindSession(ctx context.Context, userID, id string) (*coachd.Session, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	s, err := findSession(ctx, tx, userID, id)
	if err != nil {
		return nil, err
	}
	return s, tx.commit()
}

// ListSessions returns the user's sessions, newest first.
func (db *DB) ListSessions(ctx context.Context, userID string, page coachd.Page) ([]*coachd.Session, string, error) {
	return listNewestFirst(ctx, db, "list sessions", "sessions", sessionColumns, coachd.PrefixSession, scanSession,
		func(v *coachd.Session) timeIDCursor { return timeIDCursor{v.CreatedAt.UnixMicro(), v.ID} }, userID, page)
}

// UpdateSession applies upd to the user's session and returns the result.
func (db *DB) UpdateSession(ctx context.Context, userID, id string, upd coachd.SessionUpdate) (*coachd.Session, error) {
	if upd.Status != nil && !upd.Status.Valid() {
		return nil, coachd.Invalid(coachd.FieldError{Field: "status", Message: "must be one of active, completed, expired", Code: "enum"})
	}
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	// The row's lock on Postgres: the session is written back whole, so a
	// write at once (another update, a turn's pending interaction, the
	// sweeper's expiry) must come before this read or after this write,
	// not be undone by it. SQLite's single writer already serialises them.
	q := `SELECT ` + sessionColumns + ` FROM sessions WHERE id = ? AND user_id = ?`
	if tx.d == dialectPostgres {
		q += ` FOR NO KEY UPDATE`
	}
	s, err := scanSession(tx.queryRow(ctx, q, id, userID))
	if err != nil {
		return nil, dbError(err, "session %q", id)
	}
	if upd.Title != nil {
		s.Title = *upd.Title
	}
	if upd.Mode != nil {
		s.Mode = *upd.Mode
	}
	if upd.Status != nil {
		s.Status = *upd.Status
	}
	if upd.SetPending {
		s.Pending = upd.Pending
	}
	pending, err := pendingJSON(s.Pending)
	if err != nil {
		return nil, err
	}
	s.UpdatedAt = tx.now
	if _, err := tx.exec(ctx, `UPDATE sessions SET title = ?, mode = ?, status = ?, pending_json = ?, updated_at = ?
		WHERE id = ? AND user_id = ?`,
		s.Title, s.Mode, string(s.Status), pending, tx.time(s.UpdatedAt), s.ID, userID); err != nil {
		return nil, dbError(err, "update session")
	}
	return s, tx.commit()
}

// DeleteSession deletes the user's session and its messages. Notes the
// session wrote stay, detached from it.
func (db *DB) DeleteSession(ctx context.Context, userID, id string) error {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	res, err := tx.exec(ctx, `DELETE FROM sessions WHERE id = ? AND user_id = ?`, id, userID)
	if err != nil {
		return dbError(err, "delete session")
	}
	if n, err := res.RowsAffected(); err != nil {
		return dbError(err, "delete session")
	} else if n == 0 {
		return coachd.Errorf(coachd.ENOTFOUND, "session %q not found", id)
	}
	return tx.commit()
}

// findSession returns the user's session; another user's is ENOTFOUND.
func findSession(ctx context.Context, tx *tx, userID, id string) (*coachd.Session, error) {
	s, err := scanSession(tx.queryRow(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE id = ? AND user_id = ?`, id, userID))
	if err != nil {
		return nil, dbError(err, "session %q", id)
	}
	return s, nil
}

// pendingJSON encodes a pending interaction for pending_json; nil is NULL.
func pendingJSON(p *coachd.PendingInteraction) (any, error) {
	if p == nil {
		return nil, nil
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil, coachd.Invalid(coachd.FieldError{Field: "pending_interaction", Message: err.Error(), Code: "format"})
	}
	return string(b), nil
}

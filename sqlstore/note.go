package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"time"

	"github.com/coachd/coachd"
)

const noteColumns = `id, user_id, session_id, note_type, category, title, content, importance, market_slug, pinned, deleted_at, created_at, updated_at`

func scanNote(row interface{ Scan(...any) error }) (*coachd.Note, error) {
	n := &coachd.Note{}
	var sessionID *string
	if err := row.Scan(&n.ID, &n.UserID, &sessionID, &n.Type, &n.Category, &n.Title, &n.Content, &n.Importance,
		&n.MarketSlug, &n.Pinned, nullTimeCol{&n.DeletedAt}, timeCol{&n.CreatedAt}, timeCol{&n.UpdatedAt}); err != nil {
		return nil, err
	}
	if sessionID != nil {
		n.SessionID = *sessionID
	}
	return n, nil
}

// SetNoteVocabulary sets the note types and categories notes are checked
// against (Open sets coachd.DefaultNoteVocabulary). Call it before use.
func (db *DB) SetNoteVocabulary(v coachd.NoteVocabulary) { db.notes = v }

// CreateNote stores n, defaulting Importance to 50, after validating it. A
// SessionID must name one of the user's sessions. At the user's live note
// cap (noteRoom) it is ECONFLICT.
func (db *DB) CreateNote(ctx context.Context, n *coachd.Note) error {
	if err := db.newNote(n); err != nil {
		return err
	}
	// noteRoom's UPDATE of the user's row is the transaction's first
	// statement: it takes the user's lock itself (userTx's would be one
	// more round trip on Postgres).
	_, err := writeTx(ctx, db, func(tx *tx) (struct{}, error) {
		n.ID = coachd.NewID(coachd.PrefixNote, tx.now)
		return struct{}{}, insertNote(ctx, tx, n)
	})
	return err
}

// insertNote creates n, its ID set, in tx: room for it first (noteRoom),
// then the row, stamped with the transaction's time. On Postgres the two
// are one statement, the row a data-modifying WITH of the room's UPDATE.
func insertNote(ctx context.Context, tx *tx, n *coachd.Note) error {
	var sessionID any
	if n.SessionID != "" {
		sessionID = n.SessionID
	}
	n.DeletedAt = nil
	n.CreatedAt, n.UpdatedAt = tx.now, tx.now
	pg := tx.d == dialectPostgres
	args := make([]any, 0, 16)
	if pg { // noteRoomSQL's, first
		args = append(args, n.UserID, coachd.MaxNotesPerUser, n.SessionID, n.SessionID)
	}
	args = append(args, n.ID, n.UserID, sessionID, n.Type, n.Category, n.Title, n.Content, n.Importance, n.MarketSlug, n.Pinned,
		tx.time(n.CreatedAt), tx.time(n.UpdatedAt))
	if pg {
		var id string
		err := tx.queryRow(ctx, `WITH u AS (`+noteRoomSQL+` RETURNING id)
			INSERT INTO notes (`+noteColumns+`) SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ? FROM u RETURNING id`, args...).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return noRoom(ctx, tx, n.UserID, n.SessionID)
		}
		return dbError(err, "create note")
	}
	if err := noteRoom(ctx, tx, n.UserID, n.SessionID); err != nil {
		return err
	}
	if _, err := tx.exec(ctx, `INSERT INTO notes (`+noteColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?)`, args...); err != nil {
		return dbError(err, "create note")
	}
	return nil
}

// stagedNotes checks the notes an EndTurn creates (TurnEnd.Notes) before
// its transaction: each is the user's, in the write's session, with the
// ID StageNote gave it, and valid as CreateNote requires.
func (db *DB) stagedNotes(userID, sessionID string, notes []*coachd.Note) error {
	for i, n := range notes {
		if n.UserID != userID || n.SessionID != sessionID || !coachd.ValidID(coachd.PrefixNote, n.ID) {
			return coachd.Errorf(coachd.EINVALID, "note %d: not a note staged in this session", i)
		}
		if err := db.newNote(n); err != nil {
			return err
		}
	}
	return nil
}

// newNote defaults a new note's Importance to 50 and validates it.
func (db *DB) newNote(n *coachd.Note) error {
	if n.Importance == 0 {
		n.Importance = coachd.DefaultImportance
	}
	if errs := n.Validate(&db.notes); len(errs) > 0 {
		return coachd.Invalid(errs...)
	}
	return nil
}

// FindNote returns the user's note, deleted or not (DeletedAt tells), or
// ENOTFOUND.
func (db *DB) FindNote(ctx context.Context, userID, id string) (*coachd.Note, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	n, err := findNote(ctx, tx, userID, id)
	if err != nil {
		return nil, err
	}
	return n, tx.commit()
}

// ListNotes returns the user's notes that match f: pinned first, then by
// importance (high first), then newest. Deleted notes are left out unless
// f.IncludeDeleted.
func (db *DB) ListNotes(ctx context.Context, userID string, f coachd.NoteFilter, page coachd.Page) ([]*coachd.Note, string, error) {
	var errs []coachd.FieldError
	if f.Type != "" && !slices.Contains(db.notes.Types, f.Type) {
		errs = append(errs, coachd.FieldError{Field: "note_type", Message: "unknown note type", Code: "enum"})
	}
	if f.Category != "" && !slices.Contains(db.notes.Categories, f.Category) {
		errs = append(errs, coachd.FieldError{Field: "category", Message: "unknown category", Code: "enum"})
	}
	if len(errs) > 0 {
		return nil, "", coachd.Invalid(errs...)
	}
	limit := pageLimit(page)
	q := `SELECT ` + noteColumns + ` FROM notes WHERE user_id = ?`
	args := []any{userID}
	if !f.IncludeDeleted {
		q += ` AND deleted_at IS NULL`
	}
	if f.Type != "" {
		q += ` AND note_type = ?`
		args = append(args, f.Type)
	}
	if f.Category != "" {
		q += ` AND category = ?`
		args = append(args, f.Category)
	}
	if f.Pinned != nil {
		q += ` AND pinned = ?`
		args = append(args, *f.Pinned)
	}
	if page.Cursor != "" {
		c, err := decodeNoteCursor(page.Cursor)
		if err != nil {
			return nil, "", err
		}
		q += ` AND (pinned, importance, created_at, id) < (?, ?, ?, ?)`
		args = append(args, c.pinned, c.importance, db.dialect.timeArg(time.UnixMicro(c.micros)), c.id)
	}
	q += ` ORDER BY pinned DESC, importance DESC, created_at DESC, id DESC LIMIT ?`
	args = append(args, limit+1)

	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, "", err
	}
	defer tx.Rollback()
	notes, err := queryAll(ctx, tx, "list notes", scanNote, q, args...)
	if err != nil {
		return nil, "", err
	}
	notes, next := pageOf(notes, limit, func(n *coachd.Note) string {
		return noteCursor{n.Pinned, n.Importance, n.CreatedAt.UnixMicro(), n.ID}.String()
	})
	return notes, next, tx.commit()
}

// UpdateNote applies upd to the user's note, validates the result and
// saves it. A deleted note is ENOTFOUND.
func (db *DB) UpdateNote(ctx context.Context, userID, id string, upd coachd.NoteUpdate) (*coachd.Note, error) {
	return db.changeNote(ctx, userID, id, func(n *coachd.Note) error {
		if upd.Type != nil {
			n.Type = *upd.Type
		}
		if upd.Category != nil {
			n.Category = *upd.Category
		}
		if upd.Title != nil {
			n.Title = *upd.Title
		}
		if upd.Content != nil {
			n.Content = *upd.Content
		}
		if upd.Importance != nil {
			n.Importance = *upd.Importance
		}
		if upd.MarketSlug != nil {
			n.MarketSlug = *upd.MarketSlug
		}
		if upd.Pinned != nil {
			n.Pinned = *upd.Pinned
		}
		if errs := n.Validate(&db.notes); len(errs) > 0 {
			return coachd.Invalid(errs...)
		}
		return nil
	})
}

// TogglePin flips the note's pin. A deleted note is ENOTFOUND.
func (db *DB) TogglePin(ctx context.Context, userID, id string) (*coachd.Note, error) {
	return db.changeNote(ctx, userID, id, func(n *coachd.Note) error {
		n.Pinned = !n.Pinned
		return nil
	})
}

// changeNote loads the user's live note, lets change edit it and saves it,
// under the user's lock as every note write: on Postgres two changes at
// once would otherwise read the same note and the later write would undo
// the earlier (two pin toggles leaving it flipped once).
func (db *DB) changeNote(ctx context.Context, userID, id string, change func(*coachd.Note) error) (*coachd.Note, error) {
	return budgetTx(ctx, db, userID, func(tx *tx) (*coachd.Note, error) {
		n, err := findNote(ctx, tx, userID, id)
		if err != nil {
			return nil, err
		}
		if n.DeletedAt != nil {
			return nil, noteNotFound(id)
		}
		if err := change(n); err != nil {
			return nil, err
		}
		n.UpdatedAt = tx.now
		if _, err := tx.exec(ctx, `UPDATE notes SET note_type = ?, category = ?, title = ?, content = ?, importance = ?,
			market_slug = ?, pinned = ?, updated_at = ? WHERE id = ? AND user_id = ?`,
			n.Type, n.Category, n.Title, n.Content, n.Importance, n.MarketSlug, n.Pinned, tx.time(n.UpdatedAt),
			n.ID, userID); err != nil {
			return nil, dbError(err, "update note")
		}
		return n, nil
	})
}

// DeleteNote soft-deletes the user's note and purges the user's deleted
// notes beyond the newest coachd.MaxDeletedNotesPerUser. Deleting a
// deleted note is ENOTFOUND.
func (db *DB) DeleteNote(ctx context.Context, userID, id string) error {
	return userTx(ctx, db, userID, func(tx *tx) error {
		res, err := tx.exec(ctx, `UPDATE notes SET deleted_at = ?, updated_at = ? WHERE id = ? AND user_id = ? AND deleted_at IS NULL`,
			tx.time(tx.now), tx.time(tx.now), id, userID)
		if err != nil {
			return dbError(err, "delete note")
		}
		if n, err := res.RowsAffected(); err != nil {
			return dbError(err, "delete note")
		} else if n == 0 {
			return noteNotFound(id)
		}
		if err := noteGone(ctx, tx, userID); err != nil {
			return err
		}
		return purgeDeletedNotes(ctx, tx, userID)
	})
}

// RestoreNote undeletes the user's note and returns it, within the live
// note cap (noteRoom). Restoring a note that is not deleted changes
// nothing and returns it as it is, so a retried restore succeeds.
func (db *DB) RestoreNote(ctx context.Context, userID, id string) (*coachd.Note, error) {
	var n *coachd.Note
	err := userTx(ctx, db, userID, func(tx *tx) error {
		var err error
		if n, err = findNote(ctx, tx, userID, id); err != nil || n.DeletedAt == nil {
			return err
		}
		if err := noteRoom(ctx, tx, userID, ""); err != nil {
			return err
		}
		n.DeletedAt, n.UpdatedAt = nil, tx.now
		if _, err := tx.exec(ctx, `UPDATE notes SET deleted_at = NULL, updated_at = ? WHERE id = ? AND user_id = ?`,
			tx.time(n.UpdatedAt), id, userID); err != nil {
			return dbError(err, "restore note")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return n, nil
}

// NoteStats counts the user's notes: Total, Pinned, ByType and ByCategory
// count live notes, Deleted the soft-deleted ones.
func (db *DB) NoteStats(ctx context.Context, userID string) (*coachd.NoteStats, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	rows, err := tx.query(ctx, `SELECT note_type, category, pinned, deleted_at IS NOT NULL, COUNT(*) FROM notes
		WHERE user_id = ? GROUP BY note_type, category, pinned, deleted_at IS NOT NULL`, userID)
	if err != nil {
		return nil, dbError(err, "note stats")
	}
	defer rows.Close()
	st := &coachd.NoteStats{ByType: map[string]int64{}, ByCategory: map[string]int64{}}
	for rows.Next() {
		var typ, cat string
		var pinned, deleted bool
		var count int64
		if err := rows.Scan(&typ, &cat, &pinned, &deleted, &count); err != nil {
			return nil, dbError(err, "note stats")
		}
		if deleted {
			st.Deleted += count
			continue
		}
		st.Total += count
		if pinned {
			st.Pinned += count
		}
		st.ByType[typ] += count
		if cat != "" {
			st.ByCategory[cat] += count
		}
	}
	if err := rows.Err(); err != nil {
		return nil, dbError(err, "note stats")
	}
	return st, tx.commit()
}

func findNote(ctx context.Context, tx *tx, userID, id string) (*coachd.Note, error) {
	n, err := scanNote(tx.queryRow(ctx, `SELECT `+noteColumns+` FROM notes WHERE id = ? AND user_id = ?`, id, userID))
	if err != nil {
		return nil, dbError(err, "note %q", id)
	}
	return n, nil
}

func noteNotFound(id string) error { return coachd.Errorf(coachd.ENOTFOUND, "note %q not found", id) }

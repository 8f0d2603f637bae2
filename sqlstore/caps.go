package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/coachd/coachd"
)

// Per-user row caps (issue 20 finding 8). Each check counts inside the
// write's own transaction, after userTx took the user's lock, so
// concurrent writes of one user are counted one after another and cannot
// overshoot a cap together.

// userTx runs fn in a write transaction that first takes the user's lock,
// as budgetTx does, and commits what fn did.
func userTx(ctx context.Context, db *DB, userID string, fn func(*tx) error) error {
	_, err := budgetTx(ctx, db, userID, func(tx *tx) (struct{}, error) { return struct{}{}, fn(tx) })
	return err
}

// noteRoom takes room for one more live note of the user, within
// coachd.MaxNotesPerUser: one conditional UPDATE of the user's row counts
// the note (users.live_notes, kept by every note write in its
// transaction) when the cap allows and sessionID, when not "", is one of
// the user's sessions. Nothing taken, the reason is read: a missing user
// or another's session is ENOTFOUND (as findSession), a full cap
// ECONFLICT. The user's lock is held (userTx) or taken here, by the
// UPDATE, as the transaction's first statement (CreateNote); the caller
// writes the note in the same transaction, or fails it.
func noteRoom(ctx context.Context, tx *tx, userID, sessionID string) error {
	var n int64
	err := tx.queryRow(ctx, noteRoomSQL+` RETURNING live_notes`, userID, coachd.MaxNotesPerUser, sessionID, sessionID).Scan(&n)
	if !errors.Is(err, sql.ErrNoRows) {
		return dbError(err, "note room")
	}
	return noRoom(ctx, tx, userID, sessionID)
}

// noteRoomSQL is noteRoom's UPDATE; args: the user, the cap, the session
// twice.
const noteRoomSQL = `UPDATE users SET live_notes = live_notes + 1
		WHERE id = ? AND live_notes < ? AND (? = '' OR EXISTS (SELECT 1 FROM sessions s WHERE s.id = ? AND s.user_id = users.id))`

// noRoom says why noteRoomSQL took no room: the user is missing or the
// session another's (ENOTFOUND), or the cap is full (ECONFLICT).
func noRoom(ctx context.Context, tx *tx, userID, sessionID string) error {
	var n int64
	var session bool
	if err := tx.queryRow(ctx, `SELECT live_notes, EXISTS (SELECT 1 FROM sessions s WHERE s.id = ? AND s.user_id = u.id)
		FROM users u WHERE u.id = ?`, sessionID, userID).Scan(&n, &session); err != nil {
		return dbError(err, "user %q", userID)
	}
	if sessionID != "" && !session {
		return dbError(sql.ErrNoRows, "session %q", sessionID)
	}
	return coachd.ErrNoteLimit()
}

// noteGone uncounts a live note the user's transaction just deleted.
func noteGone(ctx context.Context, tx *tx, userID string) error {
	if _, err := tx.exec(ctx, `UPDATE users SET live_notes = live_notes - 1 WHERE id = ?`, userID); err != nil {
		return dbError(err, "note count")
	}
	return nil
}

// purgeDeletedNotes removes the user's soft-deleted notes beyond the newest
// coachd.MaxDeletedNotesPerUser.
func purgeDeletedNotes(ctx context.Context, tx *tx, userID string) error {
	if _, err := tx.exec(ctx, `DELETE FROM notes WHERE user_id = ? AND deleted_at IS NOT NULL AND id NOT IN (
		SELECT id FROM notes WHERE user_id = ? AND deleted_at IS NOT NULL ORDER BY deleted_at DESC, id DESC LIMIT ?)`,
		userID, userID, coachd.MaxDeletedNotesPerUser); err != nil {
		return dbError(err, "purge deleted notes")
	}
	return nil
}

// fileRoom refuses a save that adds a file beyond coachd.MaxFilesPerUser
// or grows the user's content beyond coachd.MaxFileBytesPerUser; old is
// the file the save replaces, if any.
func fileRoom(ctx context.Context, tx *tx, userID string, old *coachd.File, bytes int) error {
	var count, total int64
	if err := tx.queryRow(ctx, `SELECT COUNT(*), CAST(COALESCE(SUM(bytes), 0) AS BIGINT) FROM files WHERE user_id = ?`,
		userID).Scan(&count, &total); err != nil {
		return dbError(err, "count files")
	}
	grow := int64(bytes)
	if old != nil {
		grow -= int64(old.Bytes)
	} else if count >= coachd.MaxFilesPerUser {
		return coachd.Errorf(coachd.ECONFLICT, "file limit reached (%d files): replace an existing file (the same file_type and file_name) instead of adding one",
			coachd.MaxFilesPerUser)
	}
	if grow > 0 && total+grow > coachd.MaxFileBytesPerUser {
		return coachd.Errorf(coachd.ECONFLICT, "file storage limit reached (%d MiB in all, %d bytes used): shorten or replace existing files",
			coachd.MaxFileBytesPerUser>>20, total)
	}
	return nil
}

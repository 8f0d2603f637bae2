package sqlstore

import (
	"context"

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

// noteRoom refuses one more live note at coachd.MaxNotesPerUser.
func noteRoom(ctx context.Context, tx *tx, userID string) error {
	var n int64
	if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM notes WHERE user_id = ? AND deleted_at IS NULL`, userID).Scan(&n); err != nil {
		return dbError(err, "count notes")
	}
	if n >= coachd.MaxNotesPerUser {
		return coachd.Errorf(coachd.ECONFLICT, "note limit reached (%d notes): delete some first", coachd.MaxNotesPerUser)
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

package sqlstore

import (
	"context"

	"github.com/coachd/coachd"
)

const uploadColumns = `id, user_id, name, media_type, bytes, created_at`

func scanUpload(row interface{ Scan(...any) error }, data bool) (*coachd.Upload, error) {
	u := &coachd.Upload{}
	dest := []any{&u.ID, &u.UserID, &u.Name, &u.MediaType, &u.Bytes, timeCol{&u.CreatedAt}}
	if data {
		dest = append(dest, &u.Data)
	}
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	return u, nil
}

// CreateUpload validates u (its name, and its bytes against its media
// type) and stores it within the per-user caps (uploadRoom), setting its
// ID, Bytes and CreatedAt.
func (db *DB) CreateUpload(ctx context.Context, u *coachd.Upload) error {
	if errs := u.Validate(); len(errs) > 0 {
		return coachd.Invalid(errs...)
	}
	return userTx(ctx, db, u.UserID, func(tx *tx) error {
		if _, err := db.findUser(ctx, tx, u.UserID); err != nil {
			return err
		}
		u.Bytes = len(u.Data)
		if err := uploadRoom(ctx, tx, u.UserID, u.Bytes); err != nil {
			return err
		}
		u.ID, u.CreatedAt = coachd.NewID(coachd.PrefixUpload, tx.now), tx.now
		if _, err := tx.exec(ctx, `INSERT INTO uploads (`+uploadColumns+`, data) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			u.ID, u.UserID, u.Name, u.MediaType, u.Bytes, tx.time(u.CreatedAt), u.Data); err != nil {
			return dbError(err, "create upload")
		}
		return nil
	})
}

// FindUpload returns the user's upload with its bytes, or ENOTFOUND.
func (db *DB) FindUpload(ctx context.Context, userID, id string) (*coachd.Upload, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	u, err := scanUpload(tx.queryRow(ctx, `SELECT `+uploadColumns+`, data FROM uploads WHERE id = ? AND user_id = ?`, id, userID), true)
	if err != nil {
		return nil, dbError(err, "upload %s", id)
	}
	return u, tx.commit()
}

// ListUploads returns the user's uploads, newest first, without their
// bytes.
func (db *DB) ListUploads(ctx context.Context, userID string, page coachd.Page) ([]*coachd.Upload, string, error) {
	return listNewestFirst(ctx, db, "list uploads", "uploads", uploadColumns, coachd.PrefixUpload,
		func(row interface{ Scan(...any) error }) (*coachd.Upload, error) { return scanUpload(row, false) },
		func(u *coachd.Upload) timeIDCursor { return timeIDCursor{u.CreatedAt.UnixMicro(), u.ID} }, userID, page)
}

// DeleteUpload deletes the user's upload, or answers ENOTFOUND. Messages
// it was attached to keep their own copy.
func (db *DB) DeleteUpload(ctx context.Context, userID, id string) error {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	res, err := tx.exec(ctx, `DELETE FROM uploads WHERE id = ? AND user_id = ?`, id, userID)
	if err != nil {
		return dbError(err, "delete upload")
	}
	if n, err := res.RowsAffected(); err != nil {
		return dbError(err, "delete upload")
	} else if n == 0 {
		return coachd.Errorf(coachd.ENOTFOUND, "upload %q not found", id)
	}
	return tx.commit()
}

// uploadRoom refuses an upload beyond coachd.MaxUploadsPerUser or one that
// takes the user's uploads beyond coachd.MaxUploadBytesPerUser. It runs
// under the user's lock (userTx), so concurrent uploads count one after
// another.
func uploadRoom(ctx context.Context, tx *tx, userID string, size int) error {
	var count, total int64
	if err := tx.queryRow(ctx, `SELECT COUNT(*), CAST(COALESCE(SUM(bytes), 0) AS BIGINT) FROM uploads WHERE user_id = ?`,
		userID).Scan(&count, &total); err != nil {
		return dbError(err, "count uploads")
	}
	if count >= coachd.MaxUploadsPerUser {
		return coachd.Errorf(coachd.ECONFLICT, "upload limit reached (%d uploads): delete some first", coachd.MaxUploadsPerUser)
	}
	if total+int64(size) > coachd.MaxUploadBytesPerUser {
		return coachd.Errorf(coachd.ECONFLICT, "upload storage limit reached (%d MiB in all, %d bytes used): delete some uploads first",
			coachd.MaxUploadBytesPerUser>>20, total)
	}
	return nil
}

package sqlstore

import (
	"context"
	"encoding/json"

	"github.com/coachd/coachd"
)

const fileColumns = `id, user_id, session_id, file_type, name, content, attributes, bytes, created_at, updated_at`

func scanFile(row interface{ Scan(...any) error }) (*coachd.File, error) {
	f := &coachd.File{}
	var sessionID *string
	var attrs []byte
	if err := row.Scan(&f.ID, &f.UserID, &sessionID, &f.Type, &f.Name, &f.Content, &attrs, &f.Bytes,
		timeCol{&f.CreatedAt}, timeCol{&f.UpdatedAt}); err != nil {
		return nil, err
	}
	if sessionID != nil {
		f.SessionID = *sessionID
	}
	if len(attrs) > 0 {
		if err := json.Unmarshal(attrs, &f.Attributes); err != nil {
			return nil, internal(err, "file %s: decode attributes", f.ID)
		}
	}
	return f, nil
}

// SaveFile validates f and writes it: a new row, or the user's file of the
// same type and name replaced (keeping its ID and CreatedAt), within the
// per-user caps (fileRoom). It returns after the commit, with f filled in.
func (db *DB) SaveFile(ctx context.Context, f *coachd.File) error {
	if errs := f.Validate(); len(errs) > 0 {
		return coachd.Invalid(errs...)
	}
	attrs, err := json.Marshal(f.Attributes)
	if err != nil {
		return internal(err, "encode file attributes")
	}
	return userTx(ctx, db, f.UserID, func(tx *tx) error {
		if _, err := db.findUser(ctx, tx, f.UserID); err != nil {
			return err
		}
		var sessionID any
		if f.SessionID != "" {
			if _, err := findSession(ctx, tx, f.UserID, f.SessionID); err != nil {
				return err
			}
			sessionID = f.SessionID
		}
		f.Bytes = len(f.Content)
		f.UpdatedAt = tx.now
		old, err := findFile(ctx, tx, f.UserID, f.Type, f.Name)
		switch coachd.ErrorCode(err) {
		case "":
			if err := fileRoom(ctx, tx, f.UserID, old, f.Bytes); err != nil {
				return err
			}
			f.ID, f.CreatedAt = old.ID, old.CreatedAt
			if _, err := tx.exec(ctx, `UPDATE files SET session_id = ?, content = ?, attributes = ?, bytes = ?, updated_at = ?
				WHERE id = ? AND user_id = ?`, sessionID, f.Content, string(attrs), f.Bytes, tx.time(f.UpdatedAt), f.ID, f.UserID); err != nil {
				return dbError(err, "update file")
			}
		case coachd.ENOTFOUND:
			if err := fileRoom(ctx, tx, f.UserID, nil, f.Bytes); err != nil {
				return err
			}
			f.ID, f.CreatedAt = coachd.NewID(coachd.PrefixFile, tx.now), tx.now
			if _, err := tx.exec(ctx, `INSERT INTO files (`+fileColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				f.ID, f.UserID, sessionID, f.Type, f.Name, f.Content, string(attrs), f.Bytes,
				tx.time(f.CreatedAt), tx.time(f.UpdatedAt)); err != nil {
				return dbError(err, "create file")
			}
		default:
			return err
		}
		return nil
	})
}

// FindFile returns the user's file of that type and name, or ENOTFOUND.
func (db *DB) FindFile(ctx context.Context, userID, fileType, name string) (*coachd.File, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	f, err := findFile(ctx, tx, userID, fileType, name)
	if err != nil {
		return nil, err
	}
	return f, tx.commit()
}

// ListFiles returns the user's files matching the filter, newest update
// first.
func (db *DB) ListFiles(ctx context.Context, userID string, flt coachd.FileFilter) ([]*coachd.File, error) {
	limit := pageLimit(coachd.Page{Limit: flt.Limit})
	q := `SELECT ` + fileColumns + ` FROM files WHERE user_id = ?`
	args := []any{userID}
	if flt.Type != "" {
		q += ` AND file_type = ?`
		args = append(args, flt.Type)
	}
	if !flt.Since.IsZero() {
		q += ` AND updated_at >= ?`
		args = append(args, db.dialect.timeArg(flt.Since))
	}
	q += ` ORDER BY updated_at DESC, id DESC LIMIT ?`
	args = append(args, limit)
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	files, err := queryAll(ctx, tx, "list files", scanFile, q, args...)
	if err != nil {
		return nil, err
	}
	return files, tx.commit()
}

// FoldFiles marks the user's files of fileType folded, in one transaction
// under the user's lock, changing nothing else of them (content, session,
// update time): a file rewritten while a listing was being folded is
// never written back with what the listing read. It returns how many it
// marked.
func (db *DB) FoldFiles(ctx context.Context, userID, fileType string) (int, error) {
	type row struct {
		id    string
		attrs coachd.FileAttributes
	}
	scan := func(r interface{ Scan(...any) error }) (row, error) {
		var x row
		var attrs []byte
		if err := r.Scan(&x.id, &attrs); err != nil {
			return x, err
		}
		if len(attrs) > 0 {
			if err := json.Unmarshal(attrs, &x.attrs); err != nil {
				return x, internal(err, "file %s: decode attributes", x.id)
			}
		}
		return x, nil
	}
	n := 0
	err := userTx(ctx, db, userID, func(tx *tx) error {
		n = 0
		rows, err := queryAll(ctx, tx, "files to fold", scan, `SELECT id, attributes FROM files WHERE user_id = ? AND file_type = ?`, userID, fileType)
		if err != nil {
			return err
		}
		for _, r := range rows {
			if r.attrs.Folded {
				continue
			}
			r.attrs.Folded = true
			attrs, err := json.Marshal(r.attrs)
			if err != nil {
				return internal(err, "encode file attributes")
			}
			if _, err := tx.exec(ctx, `UPDATE files SET attributes = ? WHERE id = ? AND user_id = ?`, string(attrs), r.id, userID); err != nil {
				return dbError(err, "fold file")
			}
			n++
		}
		return nil
	})
	return n, err
}

func findFile(ctx context.Context, tx *tx, userID, fileType, name string) (*coachd.File, error) {
	f, err := scanFile(tx.queryRow(ctx, `SELECT `+fileColumns+` FROM files WHERE user_id = ? AND file_type = ? AND name = ?`,
		userID, fileType, name))
	if err != nil {
		return nil, dbError(err, "file %s/%s", fileType, name)
	}
	return f, nil
}

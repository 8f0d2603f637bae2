package sqlstore

import (
	"context"

	"github.com/coachd/coachd"
)

// userColumns reads a user; its tokens_used is the current period's (the
// row keeps an ended period's total until its next reservation rolls the
// period), so its one argument, before the query's own, is the period's
// start (db.period).
const userColumns = `id, name, token_budget, CASE WHEN period_start < ? THEN 0 ELSE tokens_used END, created_at, updated_at, rate_limit, monthly_messages, external_id, live_notes,
	api_key_hash LIKE '` + coachd.RevokedKeyPrefix + `%'`

// period is the current budget period's start, as userColumns compares it.
func (db *DB) period(tx *tx) any {
	return tx.time(storeTime(db.budget.Period.Start(tx.now)))
}

func scanUser(row interface{ Scan(...any) error }) (*coachd.User, error) {
	u := &coachd.User{}
	var ext *string
	err := row.Scan(&u.ID, &u.Name, &u.TokenBudget, &u.TokensUsed, timeCol{&u.CreatedAt}, timeCol{&u.UpdatedAt}, &u.RateLimit, &u.MonthlyMessages, &ext, &u.LiveNotes, &u.Revoked)
	if ext != nil {
		u.ExternalID = *ext
	}
	return u, err
}

// CreateUser stores u with its API key hash. It assigns ID and timestamps
// when they are empty. A key hash already in use is ECONFLICT.
func (db *DB) CreateUser(ctx context.Context, u *coachd.User, keyHash string) error {
	var errs []coachd.FieldError
	if keyHash == "" {
		errs = append(errs, coachd.FieldError{Field: "api_key_hash", Message: "must not be empty", Code: "required"})
	}
	if u.TokenBudget < 0 {
		errs = append(errs, coachd.FieldError{Field: "token_budget", Message: "must not be negative", Code: "range"})
	}
	if u.ID != "" && !coachd.ValidID(coachd.PrefixUser, u.ID) {
		errs = append(errs, coachd.FieldError{Field: "id", Message: "must be a user ID", Code: "format"})
	}
	if len(errs) > 0 {
		return coachd.Invalid(errs...)
	}
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()

	if err := nameFree(ctx, tx, u.Name, ""); err != nil {
		return err
	}
	if u.ID == "" {
		u.ID = coachd.NewID(coachd.PrefixUser, tx.now)
	}
	if u.CreatedAt.IsZero() {
		u.CreatedAt = tx.now
	}
	if u.UpdatedAt.IsZero() {
		u.UpdatedAt = tx.now
	}
	u.CreatedAt, u.UpdatedAt = storeTime(u.CreatedAt), storeTime(u.UpdatedAt)
	var ext any
	if u.ExternalID != "" {
		ext = u.ExternalID
	}
	if _, err := tx.exec(ctx, `INSERT INTO users (id, name, api_key_hash, token_budget, tokens_used, created_at, updated_at, external_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		u.ID, u.Name, keyHash, u.TokenBudget, u.TokensUsed, tx.time(u.CreatedAt), tx.time(u.UpdatedAt), ext); err != nil {
		return dbError(err, "create user")
	}
	if err := openingLedger(ctx, tx, u); err != nil {
		return err
	}
	return tx.commit()
}

// FindUserByID returns the user with the given ID, or ENOTFOUND.
func (db *DB) FindUserByID(ctx context.Context, id string) (*coachd.User, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	u, err := db.findUser(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	return u, tx.commit()
}

// FindUserByKeyHash returns the user whose API key hashes to keyHash, or
// ENOTFOUND.
func (db *DB) FindUserByKeyHash(ctx context.Context, keyHash string) (*coachd.User, error) {
	// Every request's authentication: one statement, atomic by itself,
	// without BEGIN and COMMIT on either dialect (beginAuto keeps a read
	// transaction on SQLite, for methods of more than one statement).
	tx := db.autoRead()
	u, err := reread(ctx, func() (*coachd.User, error) {
		return scanUser(tx.queryRow(ctx, `SELECT `+userColumns+` FROM users WHERE api_key_hash = ?`, db.period(tx), keyHash))
	})
	if err != nil {
		return nil, dbError(err, "user")
	}
	return u, tx.commit()
}

// FindUserByExternalID returns the user with that identity-provider
// subject ("iss|sub"), or ENOTFOUND.
func (db *DB) FindUserByExternalID(ctx context.Context, externalID string) (*coachd.User, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	u, err := scanUser(tx.queryRow(ctx, `SELECT `+userColumns+` FROM users WHERE external_id = ?`, db.period(tx), externalID))
	if err != nil {
		return nil, dbError(err, "user")
	}
	return u, tx.commit()
}

// ListUsers returns users in ID (creation) order.
func (db *DB) ListUsers(ctx context.Context, page coachd.Page) ([]*coachd.User, string, error) {
	limit := pageLimit(page)
	after := ""
	if page.Cursor != "" {
		var err error
		if after, err = decodeIDCursor(page.Cursor, coachd.PrefixUser); err != nil {
			return nil, "", err
		}
	}
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, "", err
	}
	defer tx.Rollback()
	users, err := queryAll(ctx, tx, "list users", scanUser, `SELECT `+userColumns+` FROM users WHERE id > ? ORDER BY id LIMIT ?`, db.period(tx), after, limit+1)
	if err != nil {
		return nil, "", err
	}
	users, next := pageOf(users, limit, func(u *coachd.User) string { return encodeCursor(u.ID) })
	return users, next, tx.commit()
}

// UpdateUser applies upd and returns the updated user.
func (db *DB) UpdateUser(ctx context.Context, id string, upd coachd.UserUpdate) (*coachd.User, error) {
	if upd.TokenBudget != nil && *upd.TokenBudget < 0 {
		return nil, coachd.Invalid(coachd.FieldError{Field: "token_budget", Message: "must not be negative", Code: "range"})
	}
	if err := validLimits(upd); err != nil {
		return nil, err
	}
	// Under the user's lock (budgetTx), as every write of its budget: on
	// Postgres two updates at once would otherwise read the same row and
	// the later write would undo the earlier's fields.
	return budgetTx(ctx, db, id, func(tx *tx) (*coachd.User, error) {
		u, err := db.findUser(ctx, tx, id)
		if err != nil {
			return nil, err
		}
		if upd.Name != nil {
			if err := nameFree(ctx, tx, *upd.Name, u.ID); err != nil {
				return nil, err
			}
			u.Name = *upd.Name
		}
		if upd.TokenBudget != nil {
			u.TokenBudget = *upd.TokenBudget
		}
		applyLimits(u, upd)
		u.UpdatedAt = tx.now
		if _, err := tx.exec(ctx, `UPDATE users SET name = ?, token_budget = ?, rate_limit = ?, monthly_messages = ?, updated_at = ? WHERE id = ?`,
			u.Name, u.TokenBudget, u.RateLimit, u.MonthlyMessages, tx.time(u.UpdatedAt), u.ID); err != nil {
			return nil, dbError(err, "update user")
		}
		return u, nil
	})
}

// validLimits checks the limit overrides of an update.
func validLimits(upd coachd.UserUpdate) error {
	var errs []coachd.FieldError
	if upd.RateLimit != nil && *upd.RateLimit != "" {
		if _, err := coachd.ParseRateLimit(*upd.RateLimit); err != nil {
			errs = append(errs, coachd.FieldError{Field: "rate_limit", Message: "must be N/DURATION (like 20/60s) or off", Code: "format"})
		}
	}
	if upd.MonthlyMessages != nil && *upd.MonthlyMessages < -1 {
		errs = append(errs, coachd.FieldError{Field: "monthly_messages", Message: "must be -1 (server default), 0 (no limit) or more", Code: "range"})
	}
	if len(errs) > 0 {
		return coachd.Invalid(errs...)
	}
	return nil
}

func applyLimits(u *coachd.User, upd coachd.UserUpdate) {
	if upd.RateLimit != nil {
		u.RateLimit = *upd.RateLimit
	}
	if upd.MonthlyMessages != nil {
		if *upd.MonthlyMessages < 0 {
			u.MonthlyMessages = nil
		} else {
			n := *upd.MonthlyMessages
			u.MonthlyMessages = &n
		}
	}
}

func (db *DB) findUser(ctx context.Context, tx *tx, id string) (*coachd.User, error) {
	u, err := scanUser(tx.queryRow(ctx, `SELECT `+userColumns+` FROM users WHERE id = ?`, db.period(tx), id))
	if err != nil {
		return nil, dbError(err, "user %q", id)
	}
	return u, nil
}

// SetUserKey replaces the user's API key hash (the old key, and the stream
// tokens minted with it, stop working).
func (db *DB) SetUserKey(ctx context.Context, id, keyHash string) error {
	if keyHash == "" {
		return coachd.Invalid(coachd.FieldError{Field: "api_key", Message: "is required", Code: "required"})
	}
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := db.findUser(ctx, tx, id); err != nil {
		return err
	}
	if _, err := tx.exec(ctx, `UPDATE users SET api_key_hash = ?, updated_at = ? WHERE id = ?`,
		keyHash, tx.time(tx.now), id); err != nil {
		return dbError(err, "set user key")
	}
	// The stream tokens minted with the old key go with it: each would
	// let an EventSource read the user's live turns for minutes more.
	if _, err := tx.exec(ctx, `DELETE FROM stream_tokens WHERE user_id = ?`, id); err != nil {
		return dbError(err, "set user key: stream tokens")
	}
	return tx.commit()
}

// nameFree refuses a user name another user (not except) already has:
// names identify users to operators (users list, --demo). On Postgres it
// first takes a lock on the name until the transaction ends, so that two
// writes of one name at once (replicas starting with --demo, a create and
// a rename) are checked one after the other; SQLite's single writer
// already serialises them.
func nameFree(ctx context.Context, tx *tx, name, except string) error {
	if tx.d == dialectPostgres {
		// Advisory locks of two int4 keys do not share the key space of
		// the one-bigint lock that serialises migrations (lockMigrations).
		if _, err := tx.exec(ctx, `SELECT pg_advisory_xact_lock(?, hashtext(?))`, userNameLock, name); err != nil {
			return dbError(err, "lock user name")
		}
	}
	var n int64
	if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM users WHERE name = ? AND id <> ?`, name, except).Scan(&n); err != nil {
		return dbError(err, "check user name")
	}
	if n > 0 {
		return coachd.Errorf(coachd.ECONFLICT, "a user named %q exists already", name)
	}
	return nil
}

// DeleteUser removes the user and everything of theirs: sessions and
// messages, notes, files, reservations, ledger, reviews, voice sessions
// (the foreign keys cascade). ENOTFOUND when there is no such user.
func (db *DB) DeleteUser(ctx context.Context, id string) error {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	res, err := tx.exec(ctx, `DELETE FROM users WHERE id = ?`, id)
	if err != nil {
		return dbError(err, "delete user")
	}
	if n, err := res.RowsAffected(); err != nil {
		return dbError(err, "delete user")
	} else if n == 0 {
		return coachd.Errorf(coachd.ENOTFOUND, "user %q not found", id)
	}
	return tx.commit()
}

// userNameLock is the first key of nameFree's advisory locks: the class of
// locks on user names.
const userNameLock = 74682361

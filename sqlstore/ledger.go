package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/coachd/coachd"
)

// BudgetStatus returns the user's account in the current period. A period
// that has moved on but not been rolled yet (no Reserve since) reads as
// the new, empty one.
func (db *DB) BudgetStatus(ctx context.Context, userID string) (*coachd.BudgetStatus, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	st := &coachd.BudgetStatus{Unit: db.budget.Unit}
	// Holds past their expiry are not held: the next reservation
	// releases them before it checks the budget (expireUser), so they
	// are left out here too, sweeper or not.
	var stale int64
	if err := tx.queryRow(ctx, `SELECT token_budget, tokens_used, tokens_reserved, period_start,
		CAST(COALESCE((SELECT SUM(l.raw_tokens) FROM ledger l WHERE l.user_id = u.id AND l.period_start = u.period_start), 0) AS BIGINT),
		CAST(COALESCE((SELECT SUM(r.held) FROM reservations r WHERE r.user_id = u.id AND r.state = 'active' AND NOT r.free_preview AND r.`+holdOver[tx.d]+`), 0) AS BIGINT)
		FROM users u WHERE id = ?`, append(leaseOverArgs(nil, tx), userID)...).
		Scan(&st.TokenBudget, &st.TokensUsed, &st.TokensReserved, timeCol{&st.PeriodStart}, &st.RawTokensUsed, &stale); err != nil {
		return nil, dbError(err, "user %q", userID)
	}
	st.TokensReserved = max(st.TokensReserved-stale, 0)
	if start := storeTime(db.budget.Period.Start(tx.now)); st.PeriodStart.Before(start) {
		st.PeriodStart, st.TokensUsed, st.RawTokensUsed = start, 0, 0
	}
	st.Remaining = coachd.RemainingTokens(st.TokenBudget, st.TokensUsed, st.TokensReserved)
	st.SetUSD()
	return st, tx.commit()
}

// Ledger returns the user's ledger rows, oldest first.
func (db *DB) Ledger(ctx context.Context, userID string) ([]coachd.LedgerEntry, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	out, err := queryAll(ctx, tx, "read ledger", func(row interface{ Scan(...any) error }) (coachd.LedgerEntry, error) {
		var e coachd.LedgerEntry
		err := row.Scan(&e.ID, &e.UserID, &e.ReservationID, &e.Used, &e.Reserved, &e.Reason,
			timeCol{&e.PeriodStart}, timeCol{&e.CreatedAt}, &e.RawTokens, &e.Unit)
		return e, err
	}, `SELECT id, user_id, reservation_id, used_delta, reserved_delta, reason, period_start, created_at, raw_tokens, unit
		FROM ledger WHERE user_id = ? ORDER BY id`, userID)
	if err != nil {
		return nil, err
	}
	return out, tx.commit()
}

// CheckLedger compares, in one statement (one snapshot), every user's
// tokens_used with the ledger sum of the current period and
// tokens_reserved with the ledger's holds and the active reservations'
// (summed from the small index of active ones, reservations_live).
func (db *DB) CheckLedger(ctx context.Context) ([]coachd.LedgerDrift, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	rows, err := tx.query(ctx, `SELECT u.id, u.tokens_used, u.tokens_reserved,
		CAST(COALESCE((SELECT SUM(l.used_delta) FROM ledger l WHERE l.user_id = u.id AND l.period_start = u.period_start), 0) AS BIGINT),
		CAST(COALESCE((SELECT SUM(l.reserved_delta) FROM ledger l WHERE l.user_id = u.id), 0) AS BIGINT),
		CAST(COALESCE(h.held, 0) AS BIGINT)
		FROM users u LEFT JOIN (SELECT r.user_id, SUM(r.held) AS held FROM reservations r WHERE r.state = 'active' GROUP BY r.user_id) h
		ON h.user_id = u.id ORDER BY u.id`)
	if err != nil {
		return nil, dbError(err, "check ledger")
	}
	defer rows.Close()
	drift := []coachd.LedgerDrift{}
	for rows.Next() {
		var d coachd.LedgerDrift
		if err := rows.Scan(&d.UserID, &d.TokensUsed, &d.TokensReserved, &d.LedgerUsed, &d.LedgerReserved, &d.Held); err != nil {
			return nil, dbError(err, "check ledger")
		}
		if d.TokensUsed != d.LedgerUsed || d.TokensReserved != d.LedgerReserved || d.TokensReserved != d.Held {
			drift = append(drift, d)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, dbError(err, "check ledger")
	}
	return drift, tx.commit()
}

// openingLedger records a new user's initial usage, if any, so that the
// cache equals the ledger from the start.
func openingLedger(ctx context.Context, tx *tx, u *coachd.User) error {
	if u.TokensUsed == 0 {
		return nil
	}
	if _, err := tx.exec(ctx, `INSERT INTO ledger (user_id, reservation_id, used_delta, reserved_delta, reason, period_start, created_at, raw_tokens)
		VALUES (?, '', ?, 0, 'opening', ?, ?, ?)`, u.ID, u.TokensUsed, tx.time(time.Unix(0, 0).UTC()), tx.time(tx.now), u.TokensUsed); err != nil {
		return dbError(err, "write ledger")
	}
	return nil
}

// HitLimit counts one event in a fixed window with one atomic upsert: the
// count only grows while it is under limit, so replicas sharing the
// database can never admit more than limit between them.
func (db *DB) HitLimit(ctx context.Context, userID string, l coachd.LimitHit) (int64, bool, error) {
	type hit struct {
		n  int64
		ok bool
	}
	h, err := retry(ctx, func() (hit, error) {
		// One upsert (and, when refused, a read of the count): on Postgres
		// without BEGIN and COMMIT, as every request pays for it.
		tx, err := db.beginAuto(ctx, true)
		if err != nil {
			return hit{}, err
		}
		defer tx.Rollback()
		var h hit
		if h.n, h.ok, err = hitLimit(ctx, tx, userID, l); err != nil {
			return hit{}, err
		}
		if !h.ok {
			err := tx.queryRow(ctx, `SELECT hits FROM limit_windows WHERE user_id = ? AND limit_key = ? AND window_start = `+limitWindow[tx.d],
				limitWindowArgs([]any{userID, l.Key}, tx, l)...).Scan(&h.n)
			switch {
			case errors.Is(err, sql.ErrNoRows):
				// The window the database's clock refused it in ended
				// since: it was full.
				h.n = l.Limit
			case err != nil:
				return hit{}, dbError(err, "count %s", l.Key)
			}
		}
		return h, tx.commit()
	})
	return h.n, h.ok, err
}

// hitLimit counts one event in tx (HitLimit's upsert) and returns the
// count and whether it was allowed; a refused event changes nothing (and
// its count is not read).
func hitLimit(ctx context.Context, tx *tx, userID string, l coachd.LimitHit) (int64, bool, error) {
	var n int64
	err := tx.queryRow(ctx, limitInsert+` VALUES (?, ?, `+limitWindow[tx.d]+`, 1) `+limitConflict,
		append(limitWindowArgs([]any{userID, l.Key}, tx, l), l.Limit)...).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if violation(err) == violationForeignKey {
		// No such user: on SQLite an admission counts its limits before
		// anything else reads the user's row.
		return 0, false, dbError(sql.ErrNoRows, "user %q", userID)
	}
	if err != nil {
		return 0, false, dbError(err, "count %s", l.Key)
	}
	return n, true, nil
}

// A limit's count, shared by hitLimit and lockLimitsPG: limitInsert, the
// row (user, key, window start, 1), then limitConflict, which adds one to
// a window already counted while it is under its limit (the argument).
const (
	limitInsert   = `INSERT INTO limit_windows (user_id, limit_key, window_start, hits)`
	limitConflict = `ON CONFLICT (user_id, limit_key, window_start) DO UPDATE SET hits = limit_windows.hits + 1
		WHERE limit_windows.hits < ? RETURNING hits`
)

// limitWindow[d] is the start of the window a limit counts in, in
// dialect d; limitWindowArgs appends its args. On SQLite (one machine,
// one clock) it is the caller's Window. On Postgres, for a limit with a
// length (Per), it is the window of that length that holds the
// database's clock, counted from Go's zero time as time.Truncate counts
// (62135596800 s before the Unix epoch), so it is the Window a caller on
// the database's clock computes: replicas began windows by their own
// clocks, and one ahead of another counted the user in the next window
// while the other still counted this one, letting a burst of twice the
// limit and more through. Without Per it is the caller's Window.
var limitWindow = [...]string{
	dialectSQLite: `?`,
	dialectPostgres: `COALESCE(timestamptz 'epoch' + CAST(floor((extract(epoch FROM clock_timestamp()) * 1000000 + 62135596800000000) / ?::bigint)
		* ?::bigint - 62135596800000000 AS bigint) * interval '1 microsecond', ?::timestamptz)`,
}

// limitWindowArgs appends limitWindow's args for l to args.
func limitWindowArgs(args []any, tx *tx, l coachd.LimitHit) []any {
	if tx.d == dialectPostgres {
		var per any // NULL: the caller's Window
		if l.Per >= time.Microsecond {
			per = l.Per.Microseconds()
		}
		args = append(args, per, per)
	}
	return append(args, tx.time(storeTime(l.Window)))
}

// ReleaseLimit gives back one event HitLimit counted for l, ago before
// now. On SQLite the window is l's; on Postgres, for a limit with a
// length, the one that held the database's clock ago, which is the one
// HitLimit counted it in even when a window began since.
func (db *DB) ReleaseLimit(ctx context.Context, userID string, l coachd.LimitHit, ago time.Duration) error {
	_, err := retry(ctx, func() (struct{}, error) {
		tx, err := db.beginAuto(ctx, true)
		if err != nil {
			return struct{}{}, err
		}
		defer tx.Rollback()
		window, args := `?`, []any{userID, l.Key}
		if tx.d == dialectPostgres {
			window = releaseWindowPG
			args = append(args, max(ago, 0).Microseconds())
		}
		if _, err := tx.exec(ctx, `UPDATE limit_windows SET hits = hits - 1
			WHERE user_id = ? AND limit_key = ? AND window_start = `+window+` AND hits > 0`, limitWindowArgs(args, tx, l)...); err != nil {
			return struct{}{}, dbError(err, "release %s", l.Key)
		}
		return struct{}{}, tx.commit()
	})
	return err
}

// releaseWindowPG is limitWindow on Postgres for the database's clock
// some microseconds (the first argument) ago.
const releaseWindowPG = `COALESCE(timestamptz 'epoch' + CAST(floor((extract(epoch FROM clock_timestamp()) * 1000000 - ?::bigint + 62135596800000000) / ?::bigint)
		* ?::bigint - 62135596800000000 AS bigint) * interval '1 microsecond', ?::timestamptz)`

// replicaSkew is how far replicas' clocks may be from the database's
// for the sweeper to keep a window a replica still counts (SweepLimits).
const replicaSkew = `interval '1 minute'`

// SweepLimits deletes the limit windows that started before before and
// have ended. A window's length is not stored (a rate limit's is its
// own, a user's override may be weeks long, the monthly one a calendar
// month), so its age alone cannot say whether it still counts. But the
// windows of one user's limit follow each other: one is over once a later
// one of the same user and key has been counted, and the latest is kept
// however old, one row per user and key. On Postgres the later window
// must have begun a minute before the database's clock: windows begin by
// each replica's clock, and a replica ahead of another begins the next
// one while the other still counts this one, which, swept, it counted
// again from nothing (replicaSkew).
func (db *DB) SweepLimits(ctx context.Context, before time.Time) error {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	begun := ``
	if tx.d == dialectPostgres {
		begun = ` AND later.window_start <= clock_timestamp() - ` + replicaSkew
	}
	if _, err := tx.exec(ctx, `DELETE FROM limit_windows WHERE window_start < ? AND EXISTS (SELECT 1 FROM limit_windows later
		WHERE later.user_id = limit_windows.user_id AND later.limit_key = limit_windows.limit_key
		AND later.window_start > limit_windows.window_start`+begun+`)`, tx.time(storeTime(before))); err != nil {
		return dbError(err, "sweep limits")
	}
	if _, err := tx.exec(ctx, `DELETE FROM idempotency_keys WHERE created_at < ?`, tx.time(tx.now.Add(-24*time.Hour))); err != nil {
		return dbError(err, "sweep idempotency keys")
	}
	return tx.commit()
}

package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/coachd/coachd"
	"github.com/jackc/pgx/v5/pgconn"
)

// SetBudgetConfig sets the budget period and the reservation expiry (Open
// sets the defaults). Call it before the store is used.
func (db *DB) SetBudgetConfig(c coachd.BudgetConfig) {
	if c.TTL <= 0 {
		c.TTL = coachd.DefaultReservationTTL
	}
	if c.Period == "" {
		c.Period = coachd.PeriodNone
	}
	if c.Unit == "" {
		c.Unit = coachd.UnitTokens
	}
	db.budget = c
}

const reservationColumns = `id, user_id, session_id, agent, estimate, held, charged, state, free_preview, period_start, created_at, expires_at, raw_charged`

func scanReservation(row interface{ Scan(...any) error }) (*coachd.Reservation, error) {
	r := &coachd.Reservation{}
	err := row.Scan(&r.ID, &r.UserID, &r.SessionID, &r.Agent, &r.Estimate, &r.Held, &r.Charged, &r.State,
		&r.FreePreview, timeCol{&r.PeriodStart}, timeCol{&r.CreatedAt}, timeCol{&r.ExpiresAt}, &r.ChargedRaw)
	return r, err
}

// retry runs fn again when Postgres aborts its transaction for a deadlock
// or a serialization failure, or when fn's statements lost their
// connection (lostTx); all are safe to retry because fn's transaction
// was rolled back.
func retry[T any](ctx context.Context, fn func() (T, error)) (T, error) {
	for i := 0; ; i++ {
		v, err := fn()
		lost, isLost := err.(lostTx)
		if isLost {
			err = lost.error
		}
		var pe *pgconn.PgError
		if i < 8 && (isLost || errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")) && ctx.Err() == nil {
			time.Sleep(time.Duration(i+1) * time.Millisecond)
			continue
		}
		return v, err
	}
}

// lostTx is the error of a transaction's statement whose connection
// closed (connClosed) before its COMMIT was sent: the server rolled the
// transaction back, so retry may run it again. A COMMIT that fails so is
// not one: it may have been applied.
type lostTx struct{ error }

// lost marks err as lostTx when it says the connection closed.
func lost(err error) error {
	if err != nil && connClosed(err) {
		return lostTx{err}
	}
	return err
}

// budgetTx runs fn in a write transaction that first takes userID's lock
// (lockUser), and commits what fn did; a deadlock or serialization failure
// runs it all again. Every write to a user's budget and reservations goes
// through here, or through writeTx beginning with lockBudget (a
// reservation) or lockReservation (a settlement), which take the same
// lock first.
func budgetTx[T any](ctx context.Context, db *DB, userID string, fn func(*tx) (T, error)) (T, error) {
	return writeTx(ctx, db, func(tx *tx) (T, error) {
		if err := lockUser(ctx, tx, userID); err != nil {
			var zero T
			return zero, err
		}
		return fn(tx)
	})
}

// writeTx runs fn in a write transaction and commits what it did; a
// deadlock or serialization failure runs it all again. fn takes the locks
// it needs: a budget write begins with lockUser or lockBudget.
func writeTx[T any](ctx context.Context, db *DB, fn func(*tx) (T, error)) (T, error) {
	v, _, err := writeTxBehind(ctx, db, false, fn)
	return v, err
}

// writeTxBehind is writeTx whose commit, with behind, is left behind
// (tx.commitBehind): it returns once fn's statements ran, with the func
// that waits for their commit (nil when committed already).
func writeTxBehind[T any](ctx context.Context, db *DB, behind bool, fn func(*tx) (T, error)) (T, func() error, error) {
	type result struct {
		v    T
		wait func() error
	}
	r, err := retry(ctx, func() (result, error) {
		tx, err := db.beginWrite(ctx)
		if err != nil {
			return result{}, err
		}
		defer tx.Rollback()
		v, err := fn(tx)
		if err != nil {
			return result{}, lost(err)
		}
		if !behind {
			return result{v: v}, tx.commit()
		}
		wait, err := tx.commitBehind(db.committing)
		return result{v, wait}, err
	})
	return r.v, r.wait, err
}

// Charge charges cumulative usage and keeps the rest of the estimate held.
func (db *DB) Charge(ctx context.Context, userID, id string, tokensUsed int64) (*coachd.Reservation, error) {
	return db.Settle(ctx, userID, id, coachd.Spend{Amount: tokensUsed, Tokens: tokensUsed}, settleCharge)
}

// Finalize charges real usage and releases the hold.
func (db *DB) Finalize(ctx context.Context, userID, id string, tokensUsed int64) (*coachd.Reservation, error) {
	return db.Settle(ctx, userID, id, coachd.Spend{Amount: tokensUsed, Tokens: tokensUsed}, settleFinalize)
}

// Abort charges the usage seen before an abort and releases the rest.
func (db *DB) Abort(ctx context.Context, userID, id string, tokensUsed int64) (*coachd.Reservation, error) {
	return db.Settle(ctx, userID, id, coachd.Spend{Amount: tokensUsed, Tokens: tokensUsed}, settleAbort)
}

type settleMode = coachd.SettleMode

const (
	settleCharge   = coachd.SettleCharge
	settleFinalize = coachd.SettleFinalize
	settleAbort    = coachd.SettleAbort
)

// Settle charges a cumulative spend (Amount in the budget's unit, Tokens
// raw) as mode says.
func (db *DB) Settle(ctx context.Context, userID, id string, s coachd.Spend, mode coachd.SettleMode) (*coachd.Reservation, error) {
	s, err := settleSpend(s, db.budget.Unit)
	if err != nil {
		return nil, err
	}
	return writeTx(ctx, db, func(tx *tx) (*coachd.Reservation, error) {
		r, err := lockReservation(ctx, tx, userID, id)
		if err != nil {
			return nil, err
		}
		return r, db.settleWith(ctx, tx, r, s, mode)
	})
}

// settleSpend checks a spend and bounds it: its tokens at MaxTurnTokens,
// its amount at what they can cost in unit. Charges saturate at the bound
// rather than fail: a settle that failed would leave the hold until it
// expires, charging nothing.
func settleSpend(s coachd.Spend, unit coachd.BudgetUnit) (coachd.Spend, error) {
	if s.Amount < 0 || s.Tokens < 0 {
		return s, coachd.Invalid(coachd.FieldError{Field: "tokens_used", Message: "must not be negative", Code: "range"})
	}
	s.Amount, s.Tokens = min(s.Amount, unit.MaxTurn()), min(s.Tokens, coachd.MaxTurnTokens)
	return s, nil
}

// settleWith applies s to r (apply) and sets r.Remaining: from the user
// row apply's update returned, or, when apply did not touch the user,
// from a read of it.
func (db *DB) settleWith(ctx context.Context, tx *tx, r *coachd.Reservation, s coachd.Spend, mode coachd.SettleMode) error {
	known, err := db.apply(ctx, tx, r, s, mode, false)
	if err != nil || known {
		return err
	}
	return db.remaining(ctx, tx, r)
}

// findReservation reads the user's reservation. Every write to a
// reservation happens under its user's lock (lockUser on Postgres, the
// single writer on SQLite), so a caller holding that lock reads a row no
// one else can change until it commits.
func findReservation(ctx context.Context, tx *tx, userID, id string) (*coachd.Reservation, error) {
	if !coachd.ValidID(coachd.PrefixReservation, id) {
		return nil, coachd.Errorf(coachd.ENOTFOUND, "reservation not found")
	}
	r, err := scanReservation(tx.queryRow(ctx, `SELECT `+reservationColumns+` FROM reservations WHERE id = ? AND user_id = ?`, id, userID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, coachd.Errorf(coachd.ENOTFOUND, "reservation not found")
	}
	if err != nil {
		return nil, dbError(err, "reservation %q", id)
	}
	return r, nil
}

// apply settles r with a cumulative total: it charges only what exceeds
// what was charged before (so a repeat changes nothing), sets the hold
// (what is left of the estimate while a charge keeps it active, nothing
// once settled) and writes the ledger row of the change. It reports
// whether it set r.Remaining (it did when it updated the user's row).
//
// With asIs (settleKnown), r is the caller's copy, not read in this
// transaction: the reservation's UPDATE is made on condition that the row
// is r (asKnown), and when it is not, or there is nothing to update,
// apply returns errNotAsKnown having written nothing.
func (db *DB) apply(ctx context.Context, tx *tx, r *coachd.Reservation, s coachd.Spend, mode settleMode, asIs bool) (bool, error) {
	c := db.change(tx, r, s, mode)
	if c.none {
		if asIs {
			return false, errNotAsKnown
		}
		return false, nil
	}
	known := 0 // settleSQL's and applySQL's index
	if asIs {
		known = 1
	}
	resArgs := c.updateArgs(tx, r, asIs)
	if tx.d == dialectPostgres {
		var err error
		if c.toUser {
			err = db.applyPG(ctx, tx, r, applySQL[known], resArgs, c)
		} else {
			// The expiry a charge moved on, by the database's clock.
			var exp time.Time
			err = tx.queryRow(ctx, settleSQL[tx.d][known]+` RETURNING expires_at`, resArgs...).Scan(timeCol{&exp})
			switch {
			case errors.Is(err, sql.ErrNoRows):
				err = errNotAsKnown
			case err != nil:
				err = dbError(err, "settle reservation")
			default:
				c.set(r)
				r.ExpiresAt = exp
			}
		}
		if !asIs && errors.Is(err, errNotAsKnown) { // r was read under the user's lock: gone only if deleted
			err = coachd.Errorf(coachd.ENOTFOUND, "reservation not found")
		}
		return c.toUser && err == nil, err
	}
	res, err := tx.exec(ctx, settleSQL[tx.d][known], resArgs...)
	if err != nil {
		return false, dbError(err, "settle reservation")
	}
	if asIs {
		n, err := res.RowsAffected()
		if err != nil {
			return false, dbError(err, "settle reservation")
		}
		if n != 1 {
			return false, errNotAsKnown
		}
	}
	c.set(r)
	if !c.toUser {
		return false, nil
	}
	// Usage is charged to the period the reservation was made in: it moves
	// the cached total only while that period is still the user's current.
	var budget, used, reserved int64
	if err := tx.queryRow(ctx, chargeUser, db.liveArgs([]any{tx.time(r.PeriodStart), c.diff, c.heldDelta, r.UserID}, tx, r)...).
		Scan(&budget, &used, &reserved); err != nil {
		return false, dbError(err, "charge user")
	}
	r.SetRemaining(budget, used, reserved)
	return true, db.addLedger(ctx, tx, r, c.diff, c.heldDelta, c.rawDiff, c.reason)
}

// resChange is what a settlement changes of a reservation (change): its
// charge and hold, state and expiry, the user's totals' deltas and the
// ledger row's reason. none: nothing changes; toUser: the user's totals
// and the ledger change too.
type resChange struct {
	diff, rawDiff, heldDelta, charged, held int64
	state                                   coachd.ReservationState
	expires                                 time.Time
	extend                                  int64 // Postgres: a charge moves the expiry on by this (µs, holdExtend)
	reason                                  string
	none, toUser                            bool
}

// change is apply's change of r for a cumulative total s in mode.
func (db *DB) change(tx *tx, r *coachd.Reservation, s coachd.Spend, mode settleMode) resChange {
	c := resChange{diff: max(s.Amount-r.Charged, 0), rawDiff: max(s.Tokens-r.ChargedRaw, 0), state: r.State, expires: r.ExpiresAt, reason: "charge"}
	c.charged = r.Charged + c.diff
	switch {
	case r.State == coachd.ReservationActive && mode == settleCharge:
		c.held = max(r.Estimate-c.charged, 0)
		// A charge moves the expiry on, never back before what the
		// reservation asked for (ReserveRequest.Lasts); on Postgres by
		// the database's clock (holdExtend).
		if tx.d == dialectPostgres {
			c.extend = db.budget.TTL.Microseconds()
		} else if e := storeTime(tx.now.Add(db.budget.TTL)); e.After(r.ExpiresAt) {
			c.expires = e
		}
	case r.State == coachd.ReservationActive && mode == settleFinalize:
		c.state, c.reason = coachd.ReservationFinalized, "finalize"
	case r.State == coachd.ReservationActive && mode == settleAbort:
		c.state, c.reason = coachd.ReservationAborted, "abort"
	case r.State == coachd.ReservationExpired && mode == settleFinalize:
		// A late finalize still charges the real usage.
		c.state, c.reason = coachd.ReservationFinalized, "late_finalize"
	}
	if r.FreePreview {
		c.held = 0
	}
	c.heldDelta = c.held - r.Held
	c.none = c.diff == 0 && c.rawDiff == 0 && c.heldDelta == 0 && c.state == r.State && c.expires.Equal(r.ExpiresAt) && c.extend == 0
	c.toUser = !r.FreePreview && (c.diff != 0 || c.heldDelta != 0)
	return c
}

// updateArgs is the args of c's UPDATE of r: settleSQL[0]'s, or with
// asIs settleSQL[1]'s, on condition that the row is r (asKnown).
func (c resChange) updateArgs(tx *tx, r *coachd.Reservation, asIs bool) []any {
	expires := tx.time(c.expires)
	if tx.d == dialectPostgres {
		expires = nil // the expiry kept (holdExtend)
		if c.extend > 0 {
			expires = c.extend
		}
	}
	args := []any{c.charged, c.held, string(c.state), expires, tx.time(tx.now), r.ChargedRaw + c.rawDiff, r.ID}
	if !asIs {
		return args
	}
	return append(args, r.UserID, r.Estimate, r.Held, r.Charged, string(r.State),
		r.FreePreview, tx.time(r.PeriodStart), tx.time(r.ExpiresAt), r.ChargedRaw)
}

// settleSQL[d] is a settlement's UPDATE of a reservation in dialect d,
// [1] on condition that it is as known.
var settleSQL = [...][2]string{
	dialectSQLite:   {settleSet[dialectSQLite], settleSet[dialectSQLite] + asKnown},
	dialectPostgres: {settleSet[dialectPostgres], settleSet[dialectPostgres] + asKnown},
}

var settleSet = [...]string{dialectSQLite: settleSetOf(dialectSQLite), dialectPostgres: settleSetOf(dialectPostgres)}

func settleSetOf(d dialect) string {
	return `UPDATE reservations SET charged = ?, held = ?, state = ?, expires_at = ` + holdExtend[d] + `, updated_at = ?, raw_charged = ? WHERE id = ?`
}

// set gives r the reservation's columns c wrote.
func (c resChange) set(r *coachd.Reservation) {
	r.Charged, r.Held, r.State, r.ExpiresAt, r.ChargedRaw = c.charged, c.held, c.state, c.expires, r.ChargedRaw+c.rawDiff
}

// settled reports whether a Postgres statement that made c on condition
// (applyPG's, or EndTurn's with its messages) read back the user's
// totals, that is whether it made it, and then gives r what it wrote:
// c's columns, the expiry it read back (settleColumns) and the remaining
// tokens.
func (c resChange) settled(r *coachd.Reservation, budget, used, reserved sql.NullInt64, expires time.Time) bool {
	if !remainingFrom(r, budget, used, reserved) {
		return false
	}
	c.set(r)
	r.ExpiresAt = expires
	return true
}

// addLedger writes a ledger row: used and reserved in the budget's unit,
// raw the raw tokens used stands for.
func (db *DB) addLedger(ctx context.Context, tx *tx, r *coachd.Reservation, used, reserved, raw int64, reason string) error {
	if _, err := tx.exec(ctx, ledgerRow,
		r.UserID, r.ID, used, reserved, reason, tx.time(r.PeriodStart), tx.time(tx.now), raw, string(db.budget.Unit)); err != nil {
		return dbError(err, "write ledger")
	}
	return nil
}

// remaining sets r.Remaining from the user's row (what is used and
// reserved as liveUsed and liveReserved count them).
func (db *DB) remaining(ctx context.Context, tx *tx, r *coachd.Reservation) error {
	var budget, used, reserved int64
	if err := tx.queryRow(ctx, `SELECT token_budget, `+liveUsed+`, `+liveReserved[tx.d]+` FROM users WHERE id = ?`,
		append(db.liveArgs(nil, tx, r), r.UserID)...).Scan(&budget, &used, &reserved); err != nil {
		return dbError(err, "user %q", r.UserID)
	}
	r.SetRemaining(budget, used, reserved)
	return nil
}

// expireUser releases the user's active holds past their expiry. The
// caller holds the user's lock, so the rows read are the rows updated.
func (db *DB) expireUser(ctx context.Context, tx *tx, userID string) (int, error) {
	stale, err := queryAll(ctx, tx, "find stale reservations", scanReservation,
		`SELECT `+reservationColumns+` FROM reservations WHERE user_id = ? AND state = 'active' AND `+holdOver[tx.d]+` ORDER BY id`,
		leaseOverArgs([]any{userID}, tx)...)
	if err != nil {
		return 0, err
	}
	for _, r := range stale {
		if _, err := tx.exec(ctx, `UPDATE reservations SET state = 'expired', held = 0, updated_at = ? WHERE id = ?`,
			tx.time(tx.now), r.ID); err != nil {
			return 0, dbError(err, "expire reservation")
		}
		if r.Held == 0 || r.FreePreview {
			continue
		}
		if _, err := tx.exec(ctx, `UPDATE users SET tokens_reserved = tokens_reserved - ? WHERE id = ?`, r.Held, userID); err != nil {
			return 0, dbError(err, "release hold")
		}
		if err := db.addLedger(ctx, tx, r, 0, -r.Held, 0, "expire"); err != nil {
			return 0, err
		}
	}
	return len(stale), nil
}

// ExpireReservations releases every stale hold, one user per transaction.
func (db *DB) ExpireReservations(ctx context.Context) (int, error) {
	read, err := db.beginRead(ctx)
	if err != nil {
		return 0, err
	}
	users, err := queryAll(ctx, read, "find stale reservations", scanString,
		`SELECT DISTINCT user_id FROM reservations WHERE state = 'active' AND `+holdOver[read.d], leaseOverArgs(nil, read)...)
	read.Rollback()
	if err != nil {
		return 0, err
	}
	total := 0
	for _, u := range users {
		n, err := budgetTx(ctx, db, u, func(tx *tx) (int, error) { return db.expireUser(ctx, tx, u) })
		if err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}

// FindReservation returns the user's reservation.
func (db *DB) FindReservation(ctx context.Context, userID, id string) (*coachd.Reservation, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	r, err := findReservation(ctx, tx, userID, id)
	if err != nil {
		return nil, err
	}
	if err := db.remaining(ctx, tx, r); err != nil {
		return nil, err
	}
	return r, tx.commit()
}

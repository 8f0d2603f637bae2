package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/coachd/coachd"
)

// Budget writes folded into fewer statements for Postgres, where each
// statement is a round trip to the server (SQLite runs them in-process).

// lockReservation takes userID's lock (lockUser) and then reads the
// user's reservation id (findReservation). Two statements, also on
// Postgres: one SELECT … JOIN … FOR UPDATE OF users would, after waiting
// for the lock, re-read only the users row and return the reservation as
// it was before the wait (READ COMMITTED), so a settlement racing another
// would apply its difference twice; and locking the reservation row in
// that statement as well could take the two locks in the other order.
func lockReservation(ctx context.Context, tx *tx, userID, id string) (*coachd.Reservation, error) {
	if err := lockUser(ctx, tx, userID); err != nil {
		return nil, err
	}
	return findReservation(ctx, tx, userID, id)
}

// applyPG is apply's three writes on Postgres (the reservation, the
// user's totals, the ledger row) as one statement, q (applySQL[i], with
// resArgs settleSQL[i]'s args), one round trip: the user's totals and
// the ledger row are written only when the reservation's UPDATE
// matched; when it did not, nothing is written and applyPG returns
// errNotAsKnown (a settlement on condition that the row is as the caller
// knew it, settleKnown). It gives r what it wrote (resChange.settled).
func (db *DB) applyPG(ctx context.Context, tx *tx, r *coachd.Reservation, q string, resArgs []any, c resChange) error {
	var budget, used, reserved sql.NullInt64
	var expires time.Time
	err := tx.queryRow(ctx, q, db.settleArgs(resArgs, tx, r, c)...).Scan(&budget, &used, &reserved, timeCol{&expires})
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return dbError(err, "settle reservation")
	}
	if !c.settled(r, budget, used, reserved, expires) {
		return errNotAsKnown
	}
	return nil
}

// settleWiths is applyPG's WITHs: r, setRes (which must match one row,
// or none), then u and l, the user's totals and the ledger row, written
// only when r matched. settleArgs appends to setRes's args theirs;
// settleColumns is what a statement reads back of u (remainingFrom) and
// r's expiry (holdExtend).
func settleWiths(setRes string) string {
	return `r AS (` + setRes + ` RETURNING id, expires_at),
		u AS (` + chargeUserSet + ` AND EXISTS (SELECT 1 FROM r)` + chargeUserReturning[dialectPostgres] + `),
		l AS (` + ledgerInsert + ` SELECT ?, ?, ?, ?, ?, ?, ?, ?, ? FROM r)`
}

const settleColumns = `u.token_budget, u.tokens_used, u.tokens_reserved, (SELECT r.expires_at FROM r)`

// applySQL[i] is applyPG's statement, of settleSQL[i].
var applySQL = [2]string{
	`WITH ` + settleWiths(settleSQL[dialectPostgres][0]) + ` SELECT ` + settleColumns + ` FROM u`,
	`WITH ` + settleWiths(settleSQL[dialectPostgres][1]) + ` SELECT ` + settleColumns + ` FROM u`,
}

func (db *DB) settleArgs(resArgs []any, tx *tx, r *coachd.Reservation, c resChange) []any {
	args := db.liveArgs(append(resArgs, tx.time(r.PeriodStart), c.diff, c.heldDelta, r.UserID), tx, r)
	return append(args, r.UserID, r.ID, c.diff, c.heldDelta, c.reason, tx.time(r.PeriodStart), tx.time(tx.now), c.rawDiff, string(db.budget.Unit))
}

// The budget's two writes besides the reservation's, shared by apply and
// applyPG (and ledgerInsert by reserve's Postgres statement).
const (
	chargeUserSet = `UPDATE users SET
		tokens_used = tokens_used + CASE WHEN period_start = ? THEN CAST(? AS BIGINT) ELSE 0 END,
		tokens_reserved = tokens_reserved + ? WHERE id = ?`
	ledgerInsert = `INSERT INTO ledger (user_id, reservation_id, used_delta, reserved_delta, reason, period_start, created_at, raw_tokens, unit)`
	// ledgerRow writes one ledger row; args in ledgerInsert's column order.
	ledgerRow = ledgerInsert + ` VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
)

var (
	// chargeUser adds a settlement to the user's totals (used only while
	// the reservation's period is the user's current one) and returns
	// them (chargeUserReturning); args: period start, used delta,
	// reserved delta, user id, then liveArgs'.
	chargeUser = chargeUserSet + chargeUserReturning[dialectSQLite]
	// chargeUserReturning[d] reads back the user's totals in dialect d,
	// what is used and reserved as liveUsed and liveReserved count them.
	chargeUserReturning = [...]string{
		dialectSQLite:   ` RETURNING token_budget, ` + liveUsed + ` AS tokens_used, ` + liveReserved[dialectSQLite] + ` AS tokens_reserved`,
		dialectPostgres: ` RETURNING token_budget, ` + liveUsed + ` AS tokens_used, ` + liveReserved[dialectPostgres] + ` AS tokens_reserved`,
	}
	// liveReserved[d] is, of a users row, its tokens_reserved without the
	// holds past their expiry that nothing released yet (no sweep, no
	// reservation of the user since), as BudgetStatus counts it: the
	// budget_remaining a settlement answers is what GET /v1/me says then.
	// The reservation being settled is left out of those (its hold is
	// the one the settlement set, which a Postgres statement's snapshot
	// does not show yet). Args: that reservation's id, holdOver's.
	liveReserved = [...]string{dialectSQLite: liveReservedOf(dialectSQLite), dialectPostgres: liveReservedOf(dialectPostgres)}
)

// liveUsed is, of a users row, its tokens_used in the current budget
// period: none while the row still counts one that ended (no
// reservation rolled it since), as BudgetStatus counts it. Arg: the
// current period's start.
const liveUsed = `CASE WHEN period_start < ? THEN 0 ELSE tokens_used END`

// liveArgs appends the args of liveUsed and liveReserved, for the
// settlement of r, to args.
func (db *DB) liveArgs(args []any, tx *tx, r *coachd.Reservation) []any {
	args = append(args, tx.time(storeTime(db.budget.Period.Start(tx.now))), r.ID)
	return leaseOverArgs(args, tx)
}

func liveReservedOf(d dialect) string {
	return `tokens_reserved - CAST(COALESCE((SELECT SUM(x.held) FROM reservations x WHERE x.user_id = users.id
		AND x.state = 'active' AND NOT x.free_preview AND x.id <> ? AND x.` + holdOver[d] + `), 0) AS BIGINT)`
}

// reserveHeldPG is, on Postgres, reserveSQL and insertReservation of r in
// one statement, one round trip: the hold on the user's row, then the
// reservation at the period that row returns and its ledger row, each a
// data-modifying WITH that writes only when the hold did. It reports
// whether the budget held r, and then sets r's period and remaining
// tokens; when it did not, nothing was written.
func (db *DB) reserveHeldPG(ctx context.Context, tx *tx, r *coachd.Reservation) (bool, error) {
	var budget, used, reserved sql.NullInt64
	err := tx.queryRow(ctx, reserveHeldSQL, db.holdArgs(nil, tx, r)...).
		Scan(&budget, &used, &reserved, timeCol{&r.PeriodStart}, timeCol{&r.ExpiresAt})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, dbError(err, "reserve")
	}
	return remainingFrom(r, budget, used, reserved), nil
}

// holdWiths is reserveHeldPG's WITHs: u, the hold (reserveSQL with cond
// added to its WHERE), then r and l, the reservation and its ledger row,
// written only when u held, with its expiry by the database's clock
// (holdOver). holdArgs appends their args for r to args; holdColumns is
// what a statement reads back of u (remainingFrom) and r's expiry.
func holdWiths(cond string) string {
	return `u AS (` + reserveSQL + cond + reserveReturning + `),
		r AS (` + reservationInsert + `
			SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, u.period_start, ?, ` + leaseUntil[dialectPostgres] + `, ?, ? FROM u RETURNING id, period_start, expires_at),
		l AS (` + ledgerInsert + ` SELECT ?, r.id, 0, ?, 'reserve', r.period_start, ?, 0, ? FROM r)`
}

const holdColumns = `u.token_budget, u.tokens_used, u.tokens_reserved, u.period_start, (SELECT r.expires_at FROM r)`

// reserveHeldSQL is reserveHeldPG's statement.
var reserveHeldSQL = `WITH ` + holdWiths("") + ` SELECT ` + holdColumns + ` FROM u`

func (db *DB) holdArgs(args []any, tx *tx, r *coachd.Reservation) []any {
	return append(args, r.Estimate, r.UserID, r.Estimate, r.Estimate,
		r.ID, r.UserID, r.SessionID, r.Agent, r.Estimate, r.Held, r.Charged, string(r.State), r.FreePreview,
		tx.time(r.CreatedAt), leaseArg(tx, r.ExpiresAt), r.ChargedRaw, tx.time(tx.now),
		r.UserID, r.Estimate, tx.time(tx.now), string(db.budget.Unit))
}

// remainingFrom reports whether a statement of conditional writes read
// back the user's totals (NULL, or no row, when they wrote nothing: u's
// columns, holdColumns or settleColumns), and then sets r.Remaining from
// them.
func remainingFrom(r *coachd.Reservation, budget, used, reserved sql.NullInt64) bool {
	if !budget.Valid {
		return false
	}
	r.SetRemaining(budget.Int64, used.Int64, reserved.Int64)
	return true
}

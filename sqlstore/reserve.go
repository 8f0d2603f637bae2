package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/coachd/coachd"
)

// Reserve holds req.Estimate tokens of the user's budget: after releasing
// the user's stale holds and rolling the budget period, one conditional
// UPDATE checks that the estimate fits and charges it, so two concurrent
// reservations can never both pass a check that only one fits (on
// Postgres the row lock serialises them; on SQLite the single writer).
// On SQLite that UPDATE also checks that there was nothing to release or
// roll, and only when it refuses is the budget's state read (reserve).
func (db *DB) Reserve(ctx context.Context, req coachd.ReserveRequest) (*coachd.Reservation, error) {
	if req.Estimate < 0 {
		return nil, coachd.Invalid(coachd.FieldError{Field: "estimate", Message: "must not be negative", Code: "range"})
	}
	req.Estimate = min(req.Estimate, db.budget.Unit.MaxTurn())
	// refused is the budget's refusal of a reservation that superseded
	// an open one: answered once that settlement is committed, as the
	// earlier turn ended all the same.
	var refused error
	r, err := writeTx(ctx, db, func(tx *tx) (*coachd.Reservation, error) {
		refused = nil
		st, err := db.lockBudget(ctx, tx, req.UserID)
		if err != nil {
			return nil, err
		}
		settled := 0
		if req.Supersede {
			if settled, err = db.supersede(ctx, tx, req); err != nil {
				return nil, err
			}
		}
		r, err := db.reserve(ctx, tx, req, st)
		if settled > 0 && coachd.ErrorCode(err) == coachd.EBUDGET {
			refused = err
			return nil, nil
		}
		return r, err
	})
	if err == nil && refused != nil {
		return nil, refused
	}
	return r, err
}

// lockBudget takes the user's lock for a reservation: on Postgres with
// budgetState's read, whose row lock it is. On SQLite the single writer
// is the lock, and nothing is read: reserve tries the common case first
// (no stale hold, the same period) and reads the state only when that
// refuses. It returns nil then.
func (db *DB) lockBudget(ctx context.Context, tx *tx, userID string) (*userBudgetState, error) {
	if tx.d != dialectPostgres {
		return nil, nil
	}
	st, err := db.budgetState(ctx, tx, userID)
	return &st, err
}

// userBudgetState is what a reservation must do before it checks the
// budget: release stale holds, start a new budget period.
type userBudgetState struct{ stale, roll bool }

// budgetState takes the user's lock (as lockUser) and, in the same
// statement, finds whether the user has holds past their expiry and
// whether the budget period moved on: a reservation then runs expireUser
// and rollPeriod only when they have something to do.
func (db *DB) budgetState(ctx context.Context, tx *tx, userID string) (userBudgetState, error) {
	q := budgetStateSQL[tx.d]
	if tx.d == dialectPostgres {
		q += ` FOR UPDATE`
	}
	var st userBudgetState
	if err := tx.queryRow(ctx, q, db.budgetStateArgs(nil, tx, userID)...).Scan(&st.roll, &st.stale); err != nil {
		return st, dbError(err, "user %q", userID)
	}
	return st, nil
}

// budgetStateSQL[d] is budgetState's read in dialect d; budgetStateArgs
// appends its args. A hold is stale by holdOver's clock.
var budgetStateSQL = [...]string{dialectSQLite: budgetStateOf(dialectSQLite), dialectPostgres: budgetStateOf(dialectPostgres)}

func budgetStateOf(d dialect) string {
	return `SELECT period_start < ? AS roll, EXISTS (SELECT 1 FROM reservations r
		WHERE r.user_id = users.id AND r.state = 'active' AND r.` + holdOver[d] + `) AS stale FROM users WHERE id = ?`
}

// budgetStateArgs appends budgetStateSQL's args to args: the period's
// start, holdOver's, the user.
func (db *DB) budgetStateArgs(args []any, tx *tx, userID string) []any {
	args = append(args, tx.time(storeTime(db.budget.Period.Start(tx.now))))
	return append(leaseOverArgs(args, tx), userID)
}

// reserveSQL holds the estimate when it fits the budget; the check
// subtracts from the budget rather than adding to the totals: no sum, so
// no overflow, even on totals corrupted before MaxTurnTokens bounded every
// charge. Args: the estimate, the user, the estimate twice.
const reserveSQL = `UPDATE users SET tokens_reserved = tokens_reserved + ?
	WHERE id = ? AND tokens_reserved <= token_budget - ? AND tokens_used <= token_budget - ? - tokens_reserved`

// reserveReturning is what the reservation reads back of the user.
const reserveReturning = ` RETURNING token_budget, tokens_used, tokens_reserved, period_start`

// reserveAsIsSQL is reserveSQL only while the user's budget needs nothing
// first: no active hold past its expiry (expireUser), and the period
// started (rollPeriod). Args: reserveSQL's, the period's start, now.
const reserveAsIsSQL = reserveSQL + ` AND period_start >= ?
	AND NOT EXISTS (SELECT 1 FROM reservations r WHERE r.user_id = users.id AND r.state = 'active' AND r.expires_at <= ?)` +
	reserveReturning

// reserve is Reserve after lockBudget took the user's lock; st is the
// user's budget state it read, nil when it read none (SQLite).
func (db *DB) reserve(ctx context.Context, tx *tx, req coachd.ReserveRequest, st *userBudgetState) (*coachd.Reservation, error) {
	r := db.newReservation(tx, req)
	var budget, used, reserved int64
	var err error
	if st == nil {
		// One statement in the common case; when it refuses, the state is
		// read and the reservation goes the way it tells, as on Postgres.
		start := storeTime(db.budget.Period.Start(tx.now))
		err = tx.queryRow(ctx, reserveAsIsSQL, req.Estimate, req.UserID, req.Estimate, req.Estimate, tx.time(start), tx.time(tx.now)).
			Scan(&budget, &used, &reserved, timeCol{&r.PeriodStart})
		switch {
		case err == nil:
			r.SetRemaining(budget, used, reserved)
			return db.insertReservation(ctx, tx, r)
		case !errors.Is(err, sql.ErrNoRows):
			return nil, dbError(err, "reserve")
		}
		s, err := db.budgetState(ctx, tx, req.UserID)
		if err != nil {
			return nil, err
		}
		st = &s
	}
	if st.stale {
		if _, err := db.expireUser(ctx, tx, req.UserID); err != nil {
			return nil, err
		}
	}
	if st.roll {
		if err := db.rollPeriod(ctx, tx, req.UserID); err != nil {
			return nil, err
		}
	}
	if tx.d == dialectPostgres {
		// The reservation's rows go with the hold, when it holds.
		held, err := db.reserveHeldPG(ctx, tx, r)
		if err != nil {
			return nil, err
		}
		if held {
			return r, nil
		}
		if err := db.freePreview(ctx, tx, req, r); err != nil {
			return nil, err
		}
		return db.insertReservation(ctx, tx, r)
	}
	err = tx.queryRow(ctx, reserveSQL+reserveReturning, req.Estimate, req.UserID, req.Estimate, req.Estimate).
		Scan(&budget, &used, &reserved, timeCol{&r.PeriodStart})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if err := db.freePreview(ctx, tx, req, r); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, dbError(err, "reserve")
	default:
		r.SetRemaining(budget, used, reserved)
	}
	return db.insertReservation(ctx, tx, r)
}

// newReservation is req's reservation, active and holding its estimate,
// before it is stored.
func (db *DB) newReservation(tx *tx, req coachd.ReserveRequest) *coachd.Reservation {
	return &coachd.Reservation{
		ID: coachd.NewID(coachd.PrefixReservation, tx.now), UserID: req.UserID, SessionID: req.SessionID,
		Agent: req.Agent, Estimate: req.Estimate, Held: req.Estimate, State: coachd.ReservationActive,
		CreatedAt: tx.now, ExpiresAt: storeTime(tx.now.Add(max(db.budget.TTL, req.Lasts))),
	}
}

// insertReservation stores r, held (or a free preview's), with its ledger
// row unless it is a free preview. On Postgres a held reservation is
// written with its hold (reserveHeldPG), so only free previews come here,
// and the expiry stored (by the database's clock, holdOver) is read back.
func (db *DB) insertReservation(ctx context.Context, tx *tx, r *coachd.Reservation) (*coachd.Reservation, error) {
	q, args := reservationValues[tx.d], []any{
		r.ID, r.UserID, r.SessionID, r.Agent, r.Estimate, r.Held, r.Charged, string(r.State), r.FreePreview,
		tx.time(r.PeriodStart), tx.time(r.CreatedAt), leaseArg(tx, r.ExpiresAt), r.ChargedRaw, tx.time(tx.now)}
	var err error
	if tx.d == dialectPostgres {
		err = tx.queryRow(ctx, q+` RETURNING expires_at`, args...).Scan(timeCol{&r.ExpiresAt})
	} else {
		_, err = tx.exec(ctx, q, args...)
	}
	if err != nil {
		return nil, dbError(err, "create reservation")
	}
	if !r.FreePreview {
		if err := db.addLedger(ctx, tx, r, 0, r.Estimate, 0, "reserve"); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// reservationValues[d] is a reservation's INSERT of its values in
// dialect d, its expiry by holdOver's clock (leaseUntil).
var reservationValues = [...]string{
	dialectSQLite:   reservationInsert + ` VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ` + leaseUntil[dialectSQLite] + `, ?, ?)`,
	dialectPostgres: reservationInsert + ` VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ` + leaseUntil[dialectPostgres] + `, ?, ?)`,
}

// reservationInsert is the start of a reservation's INSERT: the values,
// or the SELECT, that follow give reservationColumns, then updated_at.
const reservationInsert = `INSERT INTO reservations (` + reservationColumns + `, updated_at)`

// freePreview turns r into a free-preview reservation when the user has no
// budget and the agent grants free turns that are not used up; otherwise
// it explains why the budget cannot cover the turn.
func (db *DB) freePreview(ctx context.Context, tx *tx, req coachd.ReserveRequest, r *coachd.Reservation) error {
	// reserve took the user's lock (lockUser; SQLite's single writer), so
	// concurrent turns count the free turns one after the other.
	var budget, used, reserved int64
	err := tx.queryRow(ctx, `SELECT token_budget, tokens_used, tokens_reserved, period_start FROM users WHERE id = ?`, req.UserID).
		Scan(&budget, &used, &reserved, timeCol{&r.PeriodStart})
	if err != nil {
		return dbError(err, "user %q", req.UserID)
	}
	remaining := coachd.RemainingTokens(budget, used, reserved)
	if budget == 0 && req.FreePreviewTurns > 0 {
		// A free turn aborted before it spent anything (the model failed
		// before answering, a turn given up unrun) is not one the user
		// had: it is given back. One still running counts.
		var n int64
		if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM reservations WHERE user_id = ? AND agent = ? AND free_preview
			AND NOT (state = 'aborted' AND charged = 0 AND raw_charged = 0)`,
			req.UserID, req.Agent).Scan(&n); err != nil {
			return dbError(err, "count free previews")
		}
		if n < int64(req.FreePreviewTurns) {
			r.FreePreview, r.Held = true, 0
			return nil
		}
		e := coachd.Errorf(coachd.EBUDGET, "The free preview (%d turns) is used up and this account has no token budget.", req.FreePreviewTurns)
		e.Extra = map[string]any{"remaining": 0, "estimated_tokens": req.Estimate}
		return e
	}
	e := coachd.Errorf(coachd.EBUDGET, "Token budget exhausted: %d tokens remain and this turn needs about %d.", remaining, req.Estimate)
	if db.budget.Unit == coachd.UnitMicroUSD { // the amounts are micro-dollars
		e = coachd.Errorf(coachd.EBUDGET, "Budget exhausted: %s remains and this turn may cost about %s.",
			coachd.USDText(remaining), coachd.USDText(req.Estimate))
	}
	if budget == 0 {
		e = coachd.Errorf(coachd.EBUDGET, "This account has no token budget.")
	}
	e.Extra = map[string]any{"remaining": remaining, "estimated_tokens": req.Estimate}
	return e
}

// rollPeriod starts the user's new budget period when the configured one
// has moved on: tokens_used restarts at 0, which is the ledger's sum for a
// period without rows.
func (db *DB) rollPeriod(ctx context.Context, tx *tx, userID string) error {
	start := storeTime(db.budget.Period.Start(tx.now))
	if _, err := tx.exec(ctx, `UPDATE users SET period_start = ?, tokens_used = 0 WHERE id = ? AND period_start < ?`,
		tx.time(start), userID, tx.time(start)); err != nil {
		return dbError(err, "roll budget period")
	}
	return nil
}

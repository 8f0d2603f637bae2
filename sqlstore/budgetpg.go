package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/coachd/coachd"
)

// Budget writes folded into fewer statements for Postgres, where each
// statement is a round trip to the server (SQLite runs them in-process).

// lockReservation takes userID's lock (as lockUser) and reads the user's
// reservation id (as findReservation): on Postgres in one statement.
func lockReservation(ctx context.Context, tx *tx, userID, id string) (*coachd.Reservation, error) {
	if tx.d != dialectPostgres || !coachd.ValidID(coachd.PrefixReservation, id) {
		if err := lockUser(ctx, tx, userID); err != nil {
			return nil, err
		}
		return findReservation(ctx, tx, userID, id)
	}
	r, err := scanReservation(tx.queryRow(ctx, `SELECT `+reservationColumnsR+` FROM users u
		JOIN reservations r ON r.user_id = u.id AND r.id = ? WHERE u.id = ? FOR UPDATE OF u`, id, userID))
	if errors.Is(err, sql.ErrNoRows) {
		// No reservation, so no row and no lock: take it as lockUser
		// would (a missing user stays that error).
		if err := lockUser(ctx, tx, userID); err != nil {
			return nil, err
		}
		return nil, coachd.Errorf(coachd.ENOTFOUND, "reservation not found")
	}
	if err != nil {
		return nil, dbError(err, "reservation %q", id)
	}
	return r, nil
}

// reservationColumnsR is reservationColumns of the table aliased r.
var reservationColumnsR = "r." + strings.ReplaceAll(reservationColumns, ", ", ", r.")

// applyPG is apply's three writes on Postgres (the reservation, the
// user's totals, the ledger row) as one statement, one round trip; it
// sets r.Remaining from the user's row it updated; apply sets the rest of
// r.
func (db *DB) applyPG(ctx context.Context, tx *tx, r *coachd.Reservation, setRes string, resArgs []any, diff, heldDelta, rawDiff int64, reason string) error {
	args := append(resArgs, tx.time(r.PeriodStart), diff, heldDelta, r.UserID,
		r.UserID, r.ID, diff, heldDelta, reason, tx.time(r.PeriodStart), tx.time(tx.now), rawDiff, string(db.budget.Unit))
	var budget, used, reserved int64
	if err := tx.queryRow(ctx, `WITH r AS (`+setRes+`),
		u AS (UPDATE users SET
			tokens_used = tokens_used + CASE WHEN period_start = ? THEN CAST(? AS BIGINT) ELSE 0 END,
			tokens_reserved = tokens_reserved + ? WHERE id = ?
			RETURNING token_budget, tokens_used, tokens_reserved),
		l AS (INSERT INTO ledger (user_id, reservation_id, used_delta, reserved_delta, reason, period_start, created_at, raw_tokens, unit)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?))
		SELECT token_budget, tokens_used, tokens_reserved FROM u`, args...).Scan(&budget, &used, &reserved); err != nil {
		return dbError(err, "settle reservation")
	}
	r.Remaining = coachd.RemainingTokens(budget, used, reserved)
	return nil
}

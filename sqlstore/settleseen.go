package sqlstore

import (
	"context"
	"errors"

	"github.com/coachd/coachd"
)

// settleSeen settles the reservation the caller saw, seen (its ID and
// user checked), as settleWith would once it had read it: from seen when
// the stored row is still that (settleKnown), else from the row, read.
func (db *DB) settleSeen(ctx context.Context, tx *tx, seen *coachd.Reservation, s coachd.Spend, mode coachd.SettleMode) (*coachd.Reservation, error) {
	if r, err := db.settleKnown(ctx, tx, seen, s, mode); r != nil || err != nil {
		return r, err
	}
	return db.settleRead(ctx, tx, seen, s, mode)
}

// settleRead reads the reservation the caller saw, seen, and settles it
// (settleWith): when seen is not the stored row.
func (db *DB) settleRead(ctx context.Context, tx *tx, seen *coachd.Reservation, s coachd.Spend, mode coachd.SettleMode) (*coachd.Reservation, error) {
	r, err := findReservation(ctx, tx, seen.UserID, seen.ID)
	if err != nil {
		return nil, err
	}
	return r, db.settleWith(ctx, tx, r, s, mode)
}

// settleKnown is settleWith on k, the reservation as the caller last had
// it, without reading it first: apply's UPDATE of the reservation holds
// k's values as its condition. It returns the settled reservation (a copy
// of k), or nil, with nothing written, when the stored row is no longer k
// or apply would write nothing: the caller then reads the row and settles
// that. The caller holds the user's lock (on SQLite the single writer),
// which every write to a reservation takes first, so the row cannot
// change between the condition and the commit.
func (db *DB) settleKnown(ctx context.Context, tx *tx, k *coachd.Reservation, s coachd.Spend, mode coachd.SettleMode) (*coachd.Reservation, error) {
	r := *k
	known, err := db.apply(ctx, tx, &r, s, mode, true)
	if errors.Is(err, errNotAsKnown) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !known {
		if err := db.remaining(ctx, tx, &r); err != nil {
			return nil, err
		}
	}
	return &r, nil
}

// errNotAsKnown is apply's answer, with nothing written, when asked to
// settle a reservation as the caller knew it (settleKnown) and the stored
// row differs, or nothing would change.
var errNotAsKnown = errors.New("sqlstore: the reservation is not as known")

// asKnown is the condition of settleKnown's UPDATE: every column apply
// reads is as r has it.
const asKnown = ` AND user_id = ? AND estimate = ? AND held = ? AND charged = ? AND state = ? AND free_preview = ?
	AND period_start = ? AND expires_at = ? AND raw_charged = ?`

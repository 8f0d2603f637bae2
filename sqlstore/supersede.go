package sqlstore

import (
	"context"

	"github.com/coachd/coachd"
)

// supersede finalizes, at what they charged, the active reservations of
// req's session that recorded spend (coachd.ReserveRequest.Supersede),
// unless a turn holds the session's lease (coachd's own turn, whose
// hold is its own). A reservation that charged nothing yet is left: it
// may be a turn of the session still starting, racing this one. The
// caller holds the user's lock (lockBudget), which every write to a
// reservation takes first. It returns how many it settled.
func (db *DB) supersede(ctx context.Context, tx *tx, req coachd.ReserveRequest) (int, error) {
	if req.SessionID == "" {
		return 0, nil
	}
	open, err := queryAll(ctx, tx, "find open reservations", scanReservation,
		`SELECT `+reservationColumns+` FROM reservations r WHERE r.user_id = ? AND r.session_id = ? AND r.state = 'active'
		AND (r.charged > 0 OR r.raw_charged > 0)
		AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = r.session_id AND s.turn_owner IS NOT NULL AND NOT (s.`+leaseOver[tx.d]+`))
		ORDER BY r.id`,
		leaseOverArgs([]any{req.UserID, req.SessionID}, tx)...)
	if err != nil {
		return 0, err
	}
	for _, r := range open {
		if err := db.settleWith(ctx, tx, r, coachd.Spend{Amount: r.Charged, Tokens: r.ChargedRaw}, settleFinalize); err != nil {
			return 0, err
		}
	}
	return len(open), nil
}

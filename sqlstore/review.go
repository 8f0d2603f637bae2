package sqlstore

import (
	"context"

	"github.com/coachd/coachd"
)

const reviewColumns = `id, user_id, task_id, session_id, agent, approved, decision, trace, created_at`

func scanReview(row interface{ Scan(...any) error }) (*coachd.Review, error) {
	r := &coachd.Review{}
	var sessionID, decision *string
	var trace string
	if err := row.Scan(&r.ID, &r.UserID, &r.TaskID, &sessionID, &r.Agent, &r.Approved, &decision, &trace,
		timeCol{&r.CreatedAt}); err != nil {
		return nil, err
	}
	if sessionID != nil {
		r.SessionID = *sessionID
	}
	if decision != nil {
		r.Decision = []byte(*decision)
	}
	r.Trace = []byte(trace)
	return r, nil
}

// CreateReview validates r and stores it for its user. A SessionID must
// name one of the user's sessions.
func (db *DB) CreateReview(ctx context.Context, r *coachd.Review) error {
	if errs := r.Validate(); len(errs) > 0 {
		return coachd.Invalid(errs...)
	}
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := db.findUser(ctx, tx, r.UserID); err != nil {
		return err
	}
	var sessionID, decision any
	if r.SessionID != "" {
		if _, err := findSession(ctx, tx, r.UserID, r.SessionID); err != nil {
			return err
		}
		sessionID = r.SessionID
	}
	if len(r.Decision) > 0 {
		decision = string(r.Decision)
	}
	trace := "{}"
	if len(r.Trace) > 0 {
		trace = string(r.Trace)
	}
	r.ID, r.CreatedAt = coachd.NewID(coachd.PrefixReview, tx.now), tx.now
	if _, err := tx.exec(ctx, `INSERT INTO reviews (`+reviewColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.UserID, r.TaskID, sessionID, r.Agent, r.Approved, decision, trace, tx.time(r.CreatedAt)); err != nil {
		return dbError(err, "create review")
	}
	return tx.commit()
}

// ListReviews returns the user's reviews of taskID, oldest first: the
// newest coachd.MaxPageLimit of them, so a task reviewed more often than
// that still lists its latest iterations (and decision), not its first.
func (db *DB) ListReviews(ctx context.Context, userID, taskID string) ([]*coachd.Review, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	rs, err := queryAll(ctx, tx, "list reviews", scanReview,
		`SELECT `+reviewColumns+` FROM (SELECT `+reviewColumns+` FROM reviews WHERE user_id = ? AND task_id = ?
			ORDER BY created_at DESC, id DESC LIMIT ?) r ORDER BY created_at, id`,
		userID, taskID, coachd.MaxPageLimit)
	if err != nil {
		return nil, err
	}
	return rs, tx.commit()
}

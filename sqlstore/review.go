package sqlstore

import (
	"context"
	"slices"

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

// ListReviews returns a page of the user's reviews of taskID. Pages go
// back in time: the first holds the latest reviews, the cursor leads to
// the ones before them, and each page is oldest first. A page ends early,
// with a cursor, once its reviews hold maxReviewPageBytes.
func (db *DB) ListReviews(ctx context.Context, userID, taskID string, page coachd.Page) ([]*coachd.Review, string, error) {
	q, args, limit, err := db.newestFirst(`SELECT `+reviewColumns+` FROM reviews WHERE user_id = ? AND task_id = ?`,
		[]any{userID, taskID}, coachd.PrefixReview, page)
	if err != nil {
		return nil, "", err
	}
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, "", err
	}
	defer tx.Rollback()
	rows, err := tx.query(ctx, q, args...)
	if err != nil {
		return nil, "", dbError(err, "list reviews")
	}
	defer rows.Close()
	rs, size := []*coachd.Review{}, 0
	for size < maxReviewPageBytes && rows.Next() {
		r, err := scanReview(rows)
		if err != nil {
			return nil, "", dbError(err, "list reviews")
		}
		rs = append(rs, r)
		size += len(r.Trace) + len(r.Decision)
	}
	more := len(rs) > limit || size >= maxReviewPageBytes && rows.Next()
	if err := rows.Err(); err != nil {
		return nil, "", dbError(err, "list reviews")
	}
	rows.Close() // before the commit
	rs = rs[:min(len(rs), limit)]
	next := ""
	if more {
		last := rs[len(rs)-1]
		next = timeIDCursor{last.CreatedAt.UnixMicro(), last.ID}.String()
	}
	slices.Reverse(rs)
	return rs, next, tx.commit()
}

// maxReviewPageBytes ends a page of ListReviews early: a review may carry
// a 1 MiB trace and a 256 KiB decision, so a page of 200 could be a
// quarter of a gigabyte. A page always holds at least one review.
const maxReviewPageBytes = 8 << 20

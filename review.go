package coachd

import (
	"context"
	"encoding/json"
	"regexp"
	"time"
)

// PrefixReview prefixes review IDs.
const PrefixReview = "rev"

// Review limits.
const (
	ReviewTraceMax    = 1 << 20 // bytes of trace JSON kept per review
	ReviewDecisionMax = 256 << 10
)

var taskIDRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

// ValidTaskID reports whether s can name a review's task ("TASK-001").
func ValidTaskID(s string) bool { return taskIDRe.MatchString(s) }

// Review is one validator run over a workspace: the decision the coach
// recorded (nil when it recorded none) and the trace of what it did to
// reach it. A task is reviewed once per build iteration, so a task ID has
// a history of reviews.
type Review struct {
	ID        string          `json:"id"`
	UserID    string          `json:"user_id"`
	TaskID    string          `json:"task_id"`
	SessionID string          `json:"session_id,omitempty"`
	Agent     string          `json:"agent"`
	Approved  bool            `json:"is_approved"`
	Decision  json.RawMessage `json:"decision"` // the record_decision input; null when none was recorded
	Trace     json.RawMessage `json:"trace"`    // events and tool calls with durations
	CreatedAt time.Time       `json:"created_at"`
}

// Validate checks a review before it is stored.
func (r *Review) Validate() []FieldError {
	var errs []FieldError
	if !ValidTaskID(r.TaskID) {
		errs = append(errs, FieldError{"task_id", "must be 1 to 100 letters, digits, '.', '_' or '-', starting with a letter or digit", "format"})
	}
	if len(r.Decision) > ReviewDecisionMax || (len(r.Decision) > 0 && !json.Valid(r.Decision)) {
		errs = append(errs, FieldError{"decision", "must be JSON of at most 256 KiB", "format"})
	}
	if len(r.Trace) > ReviewTraceMax || (len(r.Trace) > 0 && !json.Valid(r.Trace)) {
		errs = append(errs, FieldError{"trace", "must be JSON of at most 1 MiB", "format"})
	}
	return errs
}

// ReviewService stores reviews.
type ReviewService interface {
	// CreateReview stores r for its user, filling in ID and CreatedAt.
	CreateReview(ctx context.Context, r *Review) error
	// ListReviews returns a page of the user's reviews of a task: the
	// first page holds the latest, next leads to earlier ones, and each
	// page is oldest first.
	ListReviews(ctx context.Context, userID, taskID string, page Page) (rs []*Review, next string, err error)
}

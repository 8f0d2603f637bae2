package server

import (
	"context"
	"encoding/json"
	"net/http"
	"unicode/utf8"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/review"
	"github.com/coachd/coachd/sse"
)

// Review request bounds.
const (
	maxRequirements    = 100
	maxRequirementLen  = 2000
	maxPlayerReportLen = 64 << 10
)

// reviewRequest is the body of POST /v1/reviews.
type reviewRequest struct {
	TaskID       string          `json:"task_id"`
	Requirements []string        `json:"requirements"`
	PlayerReport json.RawMessage `json:"player_report"`
	Workspace    string          `json:"workspace"`
	Agent        string          `json:"agent"`
}

func (req reviewRequest) Valid(context.Context) []coachd.FieldError {
	var errs []coachd.FieldError
	if !coachd.ValidTaskID(req.TaskID) {
		errs = append(errs, coachd.FieldError{Field: "task_id", Message: "must be 1 to 100 letters, digits, '.', '_' or '-'", Code: "format"})
	}
	if n := len(req.Requirements); n < 1 || n > maxRequirements {
		errs = append(errs, coachd.FieldError{Field: "requirements", Message: "must list 1 to 100 requirements", Code: "length"})
	}
	for _, r := range req.Requirements {
		if l := utf8.RuneCountInString(r); l < 1 || l > maxRequirementLen {
			errs = append(errs, coachd.FieldError{Field: "requirements", Message: "each requirement must be 1 to 2000 characters", Code: "length"})
			break
		}
	}
	if p := req.PlayerReport; len(p) > 0 && (len(p) > maxPlayerReportLen || p[0] != '{') {
		errs = append(errs, coachd.FieldError{Field: "player_report", Message: "must be a JSON object of at most 64 KiB", Code: "format"})
	} else {
		errs = append(errs, review.CheckPlayerReport(p)...)
	}
	if req.Workspace == "" {
		errs = append(errs, coachd.FieldError{Field: "workspace", Message: "is required: one of your directories under the server's workspaces root", Code: "required"})
	}
	if len(req.Agent) > 100 {
		errs = append(errs, coachd.FieldError{Field: "agent", Message: "must be at most 100 characters", Code: "length"})
	}
	return errs
}

// reviewResponse is a finished review: the stored record and why the
// coach's turn ended.
type reviewResponse struct {
	*coachd.Review
	StopReason string `json:"stop_reason"`
	// Error is why the coach's turn failed after it recorded a decision.
	Error *errorObject `json:"error,omitempty"`
}

// handleReviewCreate runs the validator coach over a workspace. It waits
// and answers with the review, or, with ?stream=true, streams the coach's
// turn as SSE (coachd dialect) and ends with a review event.
func (s *Server) handleReviewCreate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.reviews == nil {
			s.Error(w, r, coachd.Errorf(coachd.EFORBIDDEN, "reviews are off on this server: the operator starts it with --workspaces DIR"))
			return
		}
		stream := false
		q := newQuery(r)
		switch v := q.v.Get("stream"); v {
		case "", "false":
		case "true":
			stream = true
		default:
			q.fail("stream", "must be true or false", "enum")
		}
		if err := q.err(); err != nil {
			s.Error(w, r, err)
			return
		}
		req, err := decode[reviewRequest](r)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		dir, err := s.reviews.Workspace(UserFrom(r.Context()).ID, req.Workspace)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		release, err := s.reviewing.acquire(UserFrom(r.Context()).ID)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		defer release()
		run, err := s.reviews.Prepare(r.Context(), review.Request{
			User: UserFrom(r.Context()), TaskID: req.TaskID, Requirements: req.Requirements,
			PlayerReport: req.PlayerReport, Dir: dir, Agent: req.Agent,
		})
		if err != nil {
			s.Error(w, r, orNotFound(err, "agent"))
			return
		}
		w.Header().Set("X-Coachd-Session-Id", run.SessionID())
		if !stream {
			rev, res, err := run.Do(r.Context(), &collector{})
			if err != nil {
				s.Error(w, r, err)
				return
			}
			out := reviewResponse{Review: rev, StopReason: res.StopReason}
			if res.Err != nil {
				// Failed before a decision (the model unreachable, its
				// key refused): the error, as POST /v1/chat answers it,
				// not a review a client would read as "not approved".
				if rev.Decision == nil {
					s.Error(w, r, res.Err)
					return
				}
				out.Error = &errorObject{Code: res.Err.Code, Message: res.Err.Message, Details: res.Err.Details}
			}
			s.encode(w, r, http.StatusOK, out)
			return
		}
		s.observer.StreamOpened()
		defer s.observer.StreamClosed()
		sw := sse.NewWriter(w, r, sse.Coachd, s.heartbeat)
		sw.SetWriteTimeout(s.writeTime)
		defer sw.Close()
		rev, res, err := run.Do(r.Context(), sw)
		if err != nil {
			sw.Send(coachd.Event{Type: coachd.EventError, Err: coachd.AsError(err)})
			return
		}
		data, _ := json.Marshal(reviewResponse{Review: rev, StopReason: res.StopReason})
		sw.Send(coachd.Event{Type: coachd.EventReview, Data: data})
	})
}

// reviewHistory is GET /v1/reviews/{task_id}/history.
type reviewHistory struct {
	TaskID     string           `json:"task_id"`
	Reviews    []*coachd.Review `json:"reviews"`
	NextCursor string           `json:"next_cursor"`
}

// handleReviewHistory lists the user's reviews of a task, each with its
// decision and trace: a page of the latest, oldest first, whose
// next_cursor leads to the ones before them.
func (s *Server) handleReviewHistory() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		task := r.PathValue("task_id")
		if !coachd.ValidTaskID(task) {
			s.Error(w, r, coachd.Invalid(coachd.FieldError{Field: "task_id", Message: "is not a task id", Code: "format"}))
			return
		}
		servePage(s, w, r, func(p coachd.Page) ([]*coachd.Review, string, error) {
			if !r.URL.Query().Has("limit") {
				// The latest 200 unless asked: a client that never
				// pages (seed 003 counts a task's iterations) still
				// sees what it did before history paged.
				p.Limit = coachd.MaxPageLimit
			}
			return s.store.ListReviews(r.Context(), UserFrom(r.Context()).ID, task, p)
		}, func(list []*coachd.Review, next string) any { return reviewHistory{task, list, next} })
	})
}

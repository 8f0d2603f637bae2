package server

import (
	"errors"
	"net/http"
	"time"

	"github.com/coachd/coachd"
)

// Limits are the server-wide defaults of the per-user limits; a user's
// own rate_limit and monthly_messages override them.
type Limits struct {
	Rate coachd.RateLimit // zero: off
	// ToolRate limits POST /v1/tools/execute per user, in a bucket of its
	// own: an app running its own loop calls several tools per turn.
	ToolRate        coachd.RateLimit // zero: off
	MonthlyMessages int64            // 0: off
	// DefaultBudget is the token budget of users created without one.
	DefaultBudget int64
}

// limited counts a turn-starting request against the user's rate limit and
// monthly message limit, in the database so that the limits hold across
// replicas: over either one is 429 rate_limit_exceeded with Retry-After.
func (s *Server) limited(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.checkLimits(r); err != nil {
			s.Error(w, r, err)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// checkLimits counts a turn-starting request against the user's limits,
// in limitHits' order (the windows a turn's admission counts in too): the
// first one over is the answer.
func (s *Server) checkLimits(r *http.Request) error {
	return s.checkHits(r, func(coachd.LimitHit) bool { return true })
}

// checkHits is checkLimits counting only the limits that count says.
func (s *Server) checkHits(r *http.Request, count func(coachd.LimitHit) bool) error {
	u, now := UserFrom(r.Context()), s.clock.Now()
	rate, _ := s.userLimits(u)
	for _, h := range s.limitHits(u, now) {
		if !count(h) {
			continue
		}
		n, ok, err := s.store.HitLimit(r.Context(), u.ID, h)
		if err != nil {
			return err
		}
		if ok {
			continue
		}
		if h.Key != limitMessages {
			return overRate(h, rate.Per, n, now, "Rate limit (%d requests per %s) reached; retry later.")
		}
		e := coachd.Errorf(coachd.ERATELIMITED, "Monthly message limit (%d) reached.", h.Limit)
		e.Err = errMonthlyCap
		e.RetryAfter = h.Window.AddDate(0, 1, 0).Sub(now)
		e.Extra = map[string]any{"usage": n, "limit": h.Limit}
		return e
	}
	return nil
}

// errMonthlyCap is the cause of checkLimits' refusal for the monthly
// message limit: an allowance used up, unlike a rate the user may wait out.
var errMonthlyCap = errors.New("monthly message limit reached")

// limitedTools counts a tool execution against the user's tool rate, in
// the database like limited; over it is 429 rate_limit_exceeded with
// Retry-After.
func (s *Server) limitedTools(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.hitRate(r, "tool_rate", s.limits.ToolRate, "Tool rate limit (%d calls per %s) reached; retry later."); err != nil {
			s.Error(w, r, err)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// hitRate counts one request in the user's current window of rate under
// key; msg formats the limit and the window length.
func (s *Server) hitRate(r *http.Request, key string, rate coachd.RateLimit, msg string) error {
	_, err := s.takeRate(r, key, rate, msg)
	return err
}

// takeRate is hitRate, and returns a function that gives the request
// back (ReleaseLimit), to call when it failed for no fault of the user.
func (s *Server) takeRate(r *http.Request, key string, rate coachd.RateLimit, msg string) (giveBack func(), err error) {
	if rate.Off() {
		return func() {}, nil
	}
	u, now := UserFrom(r.Context()), s.clock.Now()
	h := coachd.LimitHit{Key: rateKey(key, rate.Per), Window: now.Truncate(rate.Per), Per: rate.Per, Limit: rate.N}
	n, ok, err := s.store.HitLimit(r.Context(), u.ID, h)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, overRate(h, rate.Per, n, now, msg)
	}
	return func() {
		if err := s.store.ReleaseLimit(r.Context(), u.ID, h, s.clock.Now().Sub(now)); err != nil {
			s.log(r).Warn("rate slot not given back", "limit", h.Key, "err", err)
		}
	}, nil
}

// overRate is the 429 of a rate window h of length per that the count n
// found full: retryable once the window ends (RetryAfter).
func overRate(h coachd.LimitHit, per time.Duration, n int64, now time.Time, msg string) error {
	e := coachd.Errorf(coachd.ERATELIMITED, msg, h.Limit, per)
	e.Retryable, e.RetryAfter = true, h.Window.Add(per).Sub(now)
	e.Extra = map[string]any{"usage": n, "limit": h.Limit}
	return e
}

// meResponse is GET /v1/me: the user and their budget.
type meResponse struct {
	*coachd.User
	Budget *coachd.BudgetStatus `json:"budget"`
}

func (s *Server) me(r *http.Request) (*meResponse, error) {
	u := UserFrom(r.Context())
	st, err := s.store.BudgetStatus(r.Context(), u.ID)
	if err != nil {
		return nil, err
	}
	return &meResponse{User: u, Budget: st}, nil
}

// limitErrs validates the limit fields of an admin user update.
func limitErrs(errs []coachd.FieldError, rate *string, monthly *int64) []coachd.FieldError {
	if rate != nil && *rate != "" {
		if _, err := coachd.ParseRateLimit(*rate); err != nil {
			errs = append(errs, coachd.FieldError{Field: "rate_limit", Message: "must be N/DURATION (like 20/60s), off, or empty for the server default", Code: "format"})
		}
	}
	if monthly != nil && *monthly < -1 {
		errs = append(errs, coachd.FieldError{Field: "monthly_messages", Message: "must be -1 (server default), 0 (no limit) or more", Code: "range"})
	}
	return errs
}

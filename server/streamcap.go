package server

import (
	"fmt"
	"net/http"
	"sync"

	"github.com/coachd/coachd"
)

// streamSlots counts each user's open session streams (GET
// /v1/sessions/{id}/stream) in this process, so that one user cannot take
// the --max-conns slots every other user needs; and each user's reviews
// running (reviewSlots).
type streamSlots struct {
	max  int    // <= 0: no limit
	full string // the refusal's message; %d is max
	mu   sync.Mutex
	open map[string]int
}

func newStreamSlots(max int) *streamSlots {
	return &streamSlots{max: max, open: map[string]int{},
		full: "too many open streams: %d for this user; close one (an EventSource reconnects by itself) and retry"}
}

// MaxReviewsPerUser is how many reviews (POST /v1/reviews) one user may
// have running at once in a process when Deps.MaxReviewsPerUser is zero:
// each runs the worker's tests, and a user starting fifty would take the
// machine's cores from everyone.
const MaxReviewsPerUser = 2

func newReviewSlots(max int) *streamSlots {
	if max == 0 {
		max = MaxReviewsPerUser
	}
	return &streamSlots{max: max, open: map[string]int{},
		full: "too many reviews running: %d for this user; wait for one to end and retry"}
}

// acquire takes one of the user's stream slots, or refuses with 429
// rate_limit_exceeded when all are taken; release gives it back.
func (s *streamSlots) acquire(userID string) (release func(), err error) {
	if s.max <= 0 {
		return func() {}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[userID] >= s.max {
		return nil, &coachd.Error{Code: coachd.ERATELIMITED, Retryable: true, Message: fmt.Sprintf(s.full, s.max)}
	}
	s.open[userID]++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.open[userID]--; s.open[userID] == 0 {
				delete(s.open, userID)
			}
		})
	}, nil
}

// noBody refuses a request body on GET /v1/sessions/{id}/stream. Unread,
// it would keep net/http from noticing the client leave (it watches the
// connection only once the body is read), so the stream would linger
// until its next heartbeat; and a GET body means nothing here.
func noBody(r *http.Request) error {
	if r.ContentLength != 0 || len(r.TransferEncoding) > 0 {
		return coachd.Invalid(coachd.FieldError{Field: "body", Message: "a stream request takes no body", Code: "unexpected"})
	}
	return nil
}

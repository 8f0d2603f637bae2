package server

import (
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
)

// prepareLimitedTurn is checkLimits then prepareTurn (POST /v1/chat and
// /v1/chat/stream), answering exactly
// as they did, with one write transaction fewer: a turn on an existing
// session counts the request against the user's limits in its admission
// (TurnRequest.Limits, one transaction with the lease and the
// reservation) instead of in a transaction of its own. A request that
// fails before it is admitted, or that a limit refuses there, was
// counted nowhere (the admission rolled back): it is counted apart as
// before, and a limit it is over answers before its own error, as when
// the limits came first. Counted apart first, before anything else runs:
// a new session (created before the admission), on_busy=wait (which
// queues behind a running turn) and a user a limit refused lately (so
// that a client going on past its limit is refused at once, body unread,
// with one write).
//
// The price: the first request over a limit, per user, window and
// process, is prepared (history read, context, the estimate, which may
// ask the upstream's count_tokens) before the admission refuses it; the
// next ones in the window are refused before anything is read.
func (s *Server) prepareLimitedTurn(r *http.Request) (*agent.Turn, error) {
	u := UserFrom(r.Context())
	if s.refused.recent(u.ID, s.clock.Now()) {
		if err := s.countApart(r); err != nil {
			return nil, err
		}
		return s.prepareTurn(r)
	}
	tr, err := s.chatTurn(r)
	if err != nil {
		return nil, s.limitsFirst(r, err)
	}
	tr.Limits = s.limitHits(u, s.clock.Now())
	if tr.SessionID == "" || tr.Wait || len(tr.Limits) == 0 {
		tr.Limits = nil
		if err := s.countApart(r); err != nil {
			return nil, err
		}
		return s.prepare(r, tr)
	}
	t, err := s.prepare(r, tr)
	if err == nil {
		return t, nil
	}
	if err := s.countApart(r); err != nil {
		return nil, err
	}
	if errors.Is(err, coachd.ErrLimitReached) {
		// Refused in the admission, allowed apart (a window began in
		// between): counted now, so admitted without.
		tr.Limits = nil
		return s.prepare(r, tr)
	}
	return nil, err
}

// limitsFirst counts a request that failed with err before its turn was
// admitted: a limit it is over is the answer, else err.
func (s *Server) limitsFirst(r *http.Request, err error) error {
	if lerr := s.countApart(r); lerr != nil {
		return lerr
	}
	return err
}

// countApart is checkLimits, remembering a user a limit refused.
func (s *Server) countApart(r *http.Request) error {
	err := s.checkLimits(r)
	var e *coachd.Error
	if errors.As(err, &e) && e.Code == coachd.ERATELIMITED {
		now := s.clock.Now()
		s.refused.note(UserFrom(r.Context()).ID, now, now.Add(e.RetryAfter))
	}
	return err
}

// userLimits are the user's rate and monthly message limit: their own
// where they have one, the server's otherwise.
func (s *Server) userLimits(u *coachd.User) (coachd.RateLimit, int64) {
	rate := s.limits.Rate
	if u.RateLimit != "" {
		if own, err := coachd.ParseRateLimit(u.RateLimit); err == nil {
			rate = own
		}
	}
	monthly := s.limits.MonthlyMessages
	if u.MonthlyMessages != nil {
		monthly = *u.MonthlyMessages
	}
	return rate, monthly
}

// The keys of a turn's limits in limit_windows.
const (
	limitRate     = "rate"
	limitMessages = "messages"
)

// rateKey is the key in limit_windows of a rate limit under key with
// windows of length per. The length is in it: the sweeper takes a window
// for ended once a later one of its user and key was counted, which holds
// only while the key's windows are all one length; a rate whose length
// changes (an admin's override, the server's flag) counts under a key of
// its own, not in a running window the shorter ones seem to follow.
func rateKey(key string, per time.Duration) string { return key + "/" + per.String() }

// limitHits are the counts a turn-starting request makes at now, in
// order: checkLimits makes them apart, a turn's admission in its own
// transaction.
func (s *Server) limitHits(u *coachd.User, now time.Time) []coachd.LimitHit {
	rate, monthly := s.userLimits(u)
	var hits []coachd.LimitHit
	if !rate.Off() {
		hits = append(hits, coachd.LimitHit{Key: rateKey(limitRate, rate.Per), Window: now.Truncate(rate.Per), Per: rate.Per, Limit: rate.N})
	}
	if monthly > 0 {
		hits = append(hits, coachd.LimitHit{Key: limitMessages, Window: coachd.PeriodMonthly.Start(now), Limit: monthly, PerMessage: true})
	}
	return hits
}

// maxRefusals bounds the users refusals remembers.
const maxRefusals = 10000

// refusals remembers, in this process, users a limit refused, until the
// refusing window ends. It only chooses how a request is counted (apart
// first, or in its admission); both answer the same.
type refusals struct {
	mu    sync.Mutex
	until map[string]time.Time
}

func (f *refusals) note(userID string, now, until time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.until == nil {
		f.until = map[string]time.Time{}
	}
	if len(f.until) >= maxRefusals {
		for id, t := range f.until {
			if !now.Before(t) {
				delete(f.until, id)
			}
		}
		if len(f.until) >= maxRefusals {
			clear(f.until)
		}
	}
	f.until[userID] = until
}

func (f *refusals) recent(userID string, now time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.until[userID]
	if ok && !now.Before(t) {
		delete(f.until, userID)
		return false
	}
	return ok
}

package agent

import (
	"context"
	"crypto/rand"
	"sync"
	"time"

	"github.com/coachd/coachd"
)

// MaxBusyWait bounds how long a request with on_busy=wait queues for a
// session's running turn.
const MaxBusyWait = 30 * time.Second

// DefaultTurnLease is how long a turn's database lease lasts between
// renewals: the time a session stays busy after the process running its
// turn died.
const DefaultTurnLease = 10 * time.Second

// guard allows one running turn per session: a lock in this process (so
// waiters here wake the moment a turn ends) and a lease in the database
// (so replicas sharing it exclude each other, and a lease a crashed
// process held runs out by itself).
type guard struct {
	store coachd.SessionService
	clock coachd.Clock

	mu    sync.Mutex
	turns map[string]chan struct{} // closed when the turn ends
}

func newGuard(store coachd.SessionService, clock coachd.Clock) *guard {
	return &guard{store: store, clock: clock, turns: map[string]chan struct{}{}}
}

// acquire takes the session's turn, renewing its lease every third of
// lease until released. Without wait a busy
// session is ETURNINPROGRESS at once; with wait it queues up to
// MaxBusyWait (polling the lease when another process holds it).
func (g *guard) acquire(ctx context.Context, userID, sessionID string, wait bool, lease time.Duration) (release func(), err error) {
	return g.acquireFor(ctx, userID, sessionID, waitFor(wait), lease)
}

// acquireFor is acquire queueing up to maxWait (0: not at all).
func (g *guard) acquireFor(ctx context.Context, userID, sessionID string, maxWait, lease time.Duration) (release func(), err error) {
	wait := maxWait > 0
	l, err := g.lockFor(ctx, userID, sessionID, maxWait)
	if err != nil {
		return nil, err
	}
	for {
		owner := rand.Text()
		err := g.store.AcquireTurn(ctx, userID, sessionID, owner, g.clock.Now().Add(lease))
		if err == nil {
			l.leased(owner, lease)
			return func() { l.end(nil) }, nil
		}
		if coachd.ErrorCode(err) != coachd.ETURNINPROGRESS || !wait {
			l.end(nil)
			return nil, err
		}
		if err := l.poll(ctx); err != nil {
			l.end(nil)
			return nil, err
		}
	}
}

// heldTurn is a session's turn taken in this process: its local slot and,
// once leased in the database (leased), the lease's renewal.
type heldTurn struct {
	g                 *guard
	ctx               context.Context
	userID, sessionID string
	timeout           *time.Timer // maxWait; nil unless the request waits
	maxWait           time.Duration
	pollEvery         time.Duration
	local             func()

	owner         string
	stop, renewed chan struct{} // nil until leased
	once          sync.Once
}

// lock takes the session's slot in this process. Without wait a busy
// session is ETURNINPROGRESS at once; with wait it queues up to
// MaxBusyWait, which also bounds poll.
func (g *guard) lock(ctx context.Context, userID, sessionID string, wait bool) (*heldTurn, error) {
	return g.lockFor(ctx, userID, sessionID, waitFor(wait))
}

// waitFor is how long a request queues for a busy session: MaxBusyWait
// when it waits, else 0.
func waitFor(wait bool) time.Duration {
	if wait {
		return MaxBusyWait
	}
	return 0
}

// lockFor is lock queueing up to maxWait (0: not at all).
func (g *guard) lockFor(ctx context.Context, userID, sessionID string, maxWait time.Duration) (*heldTurn, error) {
	wait := maxWait > 0
	h := &heldTurn{g: g, ctx: ctx, userID: userID, sessionID: sessionID, pollEvery: 20 * time.Millisecond, maxWait: maxWait}
	if wait {
		h.timeout = time.NewTimer(maxWait)
	}
	for {
		local, done := g.local(userID + "/" + sessionID)
		if local != nil {
			h.local = local
			return h, nil
		}
		if !wait {
			return nil, h.busy()
		}
		select {
		case <-done:
		case <-h.timeout.C:
			return nil, h.busy()
		case <-ctx.Done():
			h.timeout.Stop()
			return nil, ctx.Err()
		}
	}
}

func (h *heldTurn) busy() error {
	if h.timeout != nil {
		h.timeout.Stop()
	}
	if h.timeout != nil {
		return coachd.Errorf(coachd.ETURNINPROGRESS, "a turn is still running on this session after waiting %s", h.maxWait)
	}
	return coachd.Errorf(coachd.ETURNINPROGRESS, "a turn is already running on this session")
}

// poll waits before trying again a lease another process holds (doubling
// up to 500 ms); past MaxBusyWait it is ETURNINPROGRESS.
func (h *heldTurn) poll(ctx context.Context) error {
	if h.timeout == nil {
		return h.busy()
	}
	select {
	case <-time.After(h.pollEvery):
		h.pollEvery = min(2*h.pollEvery, 500*time.Millisecond)
		return nil
	case <-h.timeout.C:
		return h.busy()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// leased starts renewing owner's lease, taken in the database.
func (h *heldTurn) leased(owner string, lease time.Duration) {
	if h.timeout != nil {
		h.timeout.Stop()
	}
	h.owner, h.stop, h.renewed = owner, make(chan struct{}), make(chan struct{})
	go h.g.renew(context.WithoutCancel(h.ctx), h.userID, h.sessionID, owner, lease, h.stop, h.renewed)
}

// end gives up the turn once: the renewal stops, the lease is released —
// by write, when not nil, which releases it in a transaction of its own
// (EndTurn); a write that failed leaves it to ReleaseTurn — and the local
// slot is freed last.
func (h *heldTurn) end(write func(ctx context.Context) error) {
	h.once.Do(func() {
		if h.timeout != nil {
			h.timeout.Stop()
		}
		if h.stop != nil {
			close(h.stop)
			<-h.renewed
			if write == nil || h.within(write) != nil {
				// ReleaseTurn gets its own time: a write that failed may
				// have spent all of its own, and a lease left behind
				// blocks the session until it expires.
				_ = h.within(func(ctx context.Context) error {
					return whileDown(ctx, func(ctx context.Context) error {
						return h.g.store.ReleaseTurn(ctx, h.userID, h.sessionID, h.owner)
					})
				})
			}
		}
		h.local()
	})
}

// within runs f with 5 s of its own, not cancelled with the turn.
func (h *heldTurn) within(f func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(h.ctx), 5*time.Second)
	defer cancel()
	return f(ctx)
}

// renew extends owner's lease until stop is closed.
func (g *guard) renew(ctx context.Context, userID, sessionID, owner string, lease time.Duration, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(lease / 3)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			rctx, cancel := context.WithTimeout(ctx, lease/3)
			// A failed renewal is tried again at the next tick; the lease
			// still has two thirds of its time. A lease another turn took
			// stays lost (RenewTurn, not AcquireTurn, which took it back
			// once that turn released it): the turn's writes are refused
			// (its messages' fence).
			g.store.RenewTurn(rctx, userID, sessionID, owner, g.clock.Now().Add(lease))
			cancel()
		}
	}
}

// local takes the slot of a user's session (key) in this process and
// returns its release, or nil and a channel closed when the running turn
// here ends. The key holds the user: another user naming the session is
// never told it is busy (its read of the session is ENOTFOUND).
func (g *guard) local(key string) (release func(), done <-chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if ch, busy := g.turns[key]; busy {
		return nil, ch
	}
	ch := make(chan struct{})
	g.turns[key] = ch
	return func() {
		g.mu.Lock()
		delete(g.turns, key)
		g.mu.Unlock()
		close(ch)
	}, nil
}

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
	timeout := time.NewTimer(MaxBusyWait)
	defer timeout.Stop()
	busy := func() error {
		if wait {
			return coachd.Errorf(coachd.ETURNINPROGRESS, "a turn is still running on this session after waiting %s", MaxBusyWait)
		}
		return coachd.Errorf(coachd.ETURNINPROGRESS, "a turn is already running on this session")
	}
	poll := 20 * time.Millisecond
	for {
		local, done := g.local(sessionID)
		if local == nil {
			if !wait {
				return nil, busy()
			}
			select {
			case <-done:
				continue
			case <-timeout.C:
				return nil, busy()
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		owner := rand.Text()
		err := g.store.AcquireTurn(ctx, userID, sessionID, owner, g.clock.Now().Add(lease))
		if err == nil {
			stop := make(chan struct{})
			renewed := make(chan struct{})
			go g.renew(context.WithoutCancel(ctx), userID, sessionID, owner, lease, stop, renewed)
			var once sync.Once
			return func() {
				once.Do(func() {
					close(stop)
					<-renewed
					rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
					defer cancel()
					g.store.ReleaseTurn(rctx, userID, sessionID, owner)
					local()
				})
			}, nil
		}
		local()
		if coachd.ErrorCode(err) != coachd.ETURNINPROGRESS {
			return nil, err
		}
		if !wait {
			return nil, busy()
		}
		// Another process runs the turn: poll its lease.
		select {
		case <-time.After(poll):
			poll = min(2*poll, 500*time.Millisecond)
		case <-timeout.C:
			return nil, busy()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
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
			// still has two thirds of its time.
			g.store.AcquireTurn(rctx, userID, sessionID, owner, g.clock.Now().Add(lease))
			cancel()
		}
	}
}

// local takes the session's slot in this process and returns its release,
// or nil and a channel closed when the running turn here ends.
func (g *guard) local(sessionID string) (release func(), done <-chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if ch, busy := g.turns[sessionID]; busy {
		return nil, ch
	}
	ch := make(chan struct{})
	g.turns[sessionID] = ch
	return func() {
		g.mu.Lock()
		delete(g.turns, sessionID)
		g.mu.Unlock()
		close(ch)
	}, nil
}

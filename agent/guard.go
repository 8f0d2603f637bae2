package agent

import (
	"context"
	"sync"
	"time"

	"github.com/coachd/coachd"
)

// MaxBusyWait bounds how long a request with on_busy=wait queues for a
// session's running turn.
const MaxBusyWait = 30 * time.Second

// guard allows one running turn per session in this process.
type guard struct {
	mu    sync.Mutex
	turns map[string]chan struct{} // closed when the turn ends
}

func newGuard() *guard { return &guard{turns: map[string]chan struct{}{}} }

// acquire takes the session's slot. Without wait a busy session is
// ETURNINPROGRESS at once; with wait it queues up to MaxBusyWait.
func (g *guard) acquire(ctx context.Context, sessionID string, wait bool) (release func(), err error) {
	var timeout <-chan time.Time
	for {
		g.mu.Lock()
		done, busy := g.turns[sessionID]
		if !busy {
			ch := make(chan struct{})
			g.turns[sessionID] = ch
			g.mu.Unlock()
			var once sync.Once
			return func() {
				once.Do(func() {
					g.mu.Lock()
					delete(g.turns, sessionID)
					g.mu.Unlock()
					close(ch)
				})
			}, nil
		}
		g.mu.Unlock()
		if !wait {
			return nil, coachd.Errorf(coachd.ETURNINPROGRESS, "a turn is already running on this session")
		}
		if timeout == nil {
			t := time.NewTimer(MaxBusyWait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-done:
		case <-timeout:
			return nil, coachd.Errorf(coachd.ETURNINPROGRESS, "a turn is still running on this session after waiting %s", MaxBusyWait)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

package stream

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/internal/backoff"
)

// Live is a turn running in this process. It is the turn's event sink:
// Send never fails, since the turn no longer depends on any one reader.
type Live struct {
	hub                *Hub
	user, session      string
	turn               int64
	flushMu            sync.Mutex // one write to the log at a time, in order
	mu                 sync.Mutex
	events             []coachd.Event // every event of the turn, in order
	logged             int            // how many of events are in the log
	changed            chan struct{}  // closed and replaced on a change someone waits for
	watched            bool           // changed was handed to a reader since it was made
	ended              bool
	texted             bool // a text delta was sent
	cancel             context.CancelCauseFunc
	stopCause          error
	stored             func() error // whether the log's turn was stored (Stored)
	lastFlushErrLogged time.Time
}

var _ coachd.EventSink = (*Live)(nil)

// Turn returns the turn's number in its session.
func (l *Live) Turn() int64 { return l.turn }

// SetCancel gives the Live the way to stop its turn (Hub.Stop, a stop
// asked through the log, Shutdown). A stop asked before is applied now.
func (l *Live) SetCancel(cancel context.CancelCauseFunc) {
	l.mu.Lock()
	l.cancel = cancel
	cause := l.stopCause
	l.mu.Unlock()
	if cause != nil {
		cancel(cause)
	}
}

// Stored tells the Live that the log's turn, begun by the turn's
// admission, is stored once stored returns nil (an admission committing
// behind the model request). Writes to the log do not wait for it; one
// that fails asks it, and when the admission failed there is no turn to
// write to: nothing of the turn is logged, and no failure either.
func (l *Live) Stored(stored func() error) {
	l.mu.Lock()
	l.stored = stored
	l.mu.Unlock()
}

func (l *Live) stop(cause error) {
	l.mu.Lock()
	if l.stopCause == nil {
		l.stopCause = cause
	}
	cancel := l.cancel
	l.mu.Unlock()
	if cancel != nil {
		cancel(cause)
	}
}

// Send records an event of the turn and wakes its readers. The turn's
// last event (turn_ended) is logged before Send returns. A turn releases
// its session before it sends turn_ended (a client that reads the end may
// send its next message at once), so the next turn may begin before this
// one's log is whole: a reader waits for it before going on (follow's
// enter).
//
// The turn's first text that wakes a waiting reader also yields the
// processor to it: an upstream's events often arrive in a burst, and the
// turn decodes the whole burst without blocking, so the woken reader
// would otherwise wait for a processor until the burst is done (300 µs
// of the first text's time at one client in BenchmarkTurnStages). The
// yield is best effort (the scheduler may run the turn again first), and
// the turn may hold its own lock meanwhile (Turn.emit): its writes behind
// wait at most that slice. Later events are not yielded for: what the
// turn sends meanwhile goes out together in the reader's next write.
func (l *Live) Send(ev coachd.Event) error {
	ev.Turn = l.turn
	l.mu.Lock()
	if l.ended {
		l.mu.Unlock()
		return nil
	}
	if ev.Terminal() && l.stopCause == ErrShutdown && ev.StopReason == coachd.TurnAborted {
		ev.Cut = true // cut by the drain: a keyed resend answers it so (server.answerKeyed)
	}
	l.events = append(l.events, ev)
	l.ended = ev.Terminal()
	yield := false
	if l.watched {
		// Readers busy writing earlier events have not taken the
		// channel: they see this event when they look again.
		close(l.changed)
		l.changed, l.watched = make(chan struct{}), false
		yield = ev.Type == coachd.EventTextDelta && !l.texted
	}
	if ev.Type == coachd.EventTextDelta {
		l.texted = true
	}
	l.mu.Unlock()
	if yield {
		runtime.Gosched()
	}
	if ev.Terminal() {
		l.flush(context.Background())
		l.hub.done(l)
	}
	return nil
}

// Finish ends a turn that stopped without its last event (a panic): the
// readers get an interrupted ending.
func (l *Live) Finish() {
	l.mu.Lock()
	ended, seq := l.ended, int64(0)
	if n := len(l.events); n > 0 {
		seq = l.events[n-1].Seq
	}
	l.mu.Unlock()
	if !ended {
		for _, ev := range interrupted(l.turn, seq, "the turn stopped unexpectedly") {
			l.Send(ev)
		}
	}
}

// snapshot returns the events from index i on, whether the turn ended,
// and a channel closed on the next change.
func (l *Live) snapshot(i int) ([]coachd.Event, bool, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var evs []coachd.Event
	if i < len(l.events) {
		evs = l.events[i:len(l.events):len(l.events)]
	}
	l.watched = true
	return evs, l.ended, l.changed
}

// flushLoop logs the pending events every FlushEvery and shows the turn
// alive every AliveEvery, until the turn ended and everything is logged.
func (l *Live) flushLoop() {
	tick := time.NewTicker(l.hub.FlushEvery)
	defer tick.Stop()
	lastAlive := time.Now()
	for range tick.C {
		l.mu.Lock()
		pending, done := len(l.events) > l.logged, l.ended && l.logged == len(l.events)
		l.mu.Unlock()
		if done {
			return // the last event's own flush logged everything
		}
		if pending || time.Since(lastAlive) >= l.hub.AliveEvery {
			l.flush(context.Background())
			lastAlive = time.Now()
		}
	}
}

// flush writes the events not yet logged; it also marks the turn alive
// and learns whether a stop was asked for. A failure is retried at the
// next flush; it is logged once a minute at most. The turn's last write
// has no next flush: while the database is unavailable (a restart, a
// failover) it is tried again, for up to endWait, so that the turn's
// readers get its end rather than turn_interrupted (the write may land
// twice: the log keeps each batch once).
func (l *Live) flush(ctx context.Context) {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.mu.Lock()
	batch := l.events[l.logged:len(l.events):len(l.events)]
	ended, stored := l.ended, l.stored
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, endWait)
	defer cancel()
	var stop, waited bool
	err := backoff.Do(ctx, 10*time.Millisecond, 250*time.Millisecond, func() (bool, error) {
		var err error
		stop, err = l.hub.store.AppendEvents(ctx, l.user, l.session, l.turn, batch, ended)
		again := ended && coachd.ErrorCode(err) == coachd.EUNAVAILABLE && (stored == nil || stored() == nil)
		if again && !waited {
			waited = true
			l.hub.logger.Warn("event log: the turn's end waits for the database", "session", l.session, "turn", l.turn, "err", err)
		}
		return again, err
	})
	if err != nil && stored != nil && stored() != nil {
		// The admission, and the log's turn with it, was never stored
		// (the write went with it, or found no turn): nothing of the
		// turn is logged, and its failure is the turn's to report.
		l.mu.Lock()
		l.logged = len(l.events)
		l.mu.Unlock()
		return
	}
	if err != nil {
		if time.Since(l.lastFlushErrLogged) > time.Minute {
			l.lastFlushErrLogged = time.Now()
			l.hub.logger.Error("event log", "session", l.session, "turn", l.turn, "err", err)
		}
		if ended {
			// The last write: do not leave the loop waiting for it.
			l.mu.Lock()
			l.logged = len(l.events)
			l.mu.Unlock()
		}
		return
	}
	l.mu.Lock()
	l.logged += len(batch)
	l.mu.Unlock()
	if stop && !ended {
		l.stop(ErrStopRequested)
	}
}

// endWait bounds a write to the log, the turn's last one retried while
// the database is unavailable: as long as the turn's own end writes (its
// reply stored, its budget settled) are retried.
const endWait = 10 * time.Second

// interrupted is the ending readers get for a turn that can no longer end
// by itself, after its event seq: a retryable error, then turn_ended.
func interrupted(turn, seq int64, msg string) []coachd.Event {
	return []coachd.Event{
		{Type: coachd.EventError, Turn: turn, Seq: seq + 1, Err: &coachd.Error{Code: CodeInterrupted, Message: msg, Retryable: true}},
		{Type: coachd.EventTurnEnded, Turn: turn, Seq: seq + 2, StopReason: coachd.TurnError},
	}
}

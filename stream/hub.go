// Package stream makes a turn's events outlive the connection that asked
// for the turn. Each turn runs as a Live: an event sink that numbers the
// events (id turn:seq), keeps them in memory for the readers in this
// process, and writes them to the store's event log in small batches, so
// that a reader on another replica, or after a restart, follows the same
// turn from the log. Readers Follow a session from an event id: what is
// past is replayed, what comes is streamed as it happens, and a turn whose
// process died ends, for them, with a retryable error rather than silence.
package stream

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/coachd/coachd"
)

// Defaults of a Hub.
const (
	DefaultFlushEvery = 50 * time.Millisecond
	DefaultAliveEvery = time.Second
	DefaultDeadAfter  = 5 * time.Second
	DefaultPollEvery  = 100 * time.Millisecond
	DefaultKeepTurns  = 20
	// pageSize bounds one read of the log.
	pageSize = 500
)

// Errors a turn is stopped with.
var (
	ErrStopRequested = errors.New("stream: stop requested")
	ErrShutdown      = errors.New("stream: server shutting down")
)

// Codes of the errors a reader sees for a turn it can no longer follow.
const (
	CodeShutdown    = "server_shutdown"
	CodeInterrupted = "turn_interrupted"
)

// Hub keeps the turns running in this process and lets readers follow any
// turn of a session, here or in the log.
type Hub struct {
	store  coachd.StreamService
	logger *slog.Logger
	owner  string

	// FlushEvery is how long an event may wait before it is logged;
	// AliveEvery how often a running turn shows it is alive (and learns
	// of a stop asked elsewhere); DeadAfter how long a turn may show no
	// life before readers give it up; PollEvery how often a reader of a
	// turn running elsewhere reads the log; KeepTurns how many turns of
	// a session the log keeps.
	FlushEvery, AliveEvery, DeadAfter, PollEvery time.Duration
	KeepTurns                                    int

	mu       sync.Mutex
	live     map[string]*Live // session id → its running turn here
	begun    chan struct{}    // closed and replaced when a turn begins
	shutdown chan struct{}    // closed by Shutdown
	down     bool
	turns    sync.WaitGroup
	idle     map[string]*idleSession // user and session id → parked followers (idle.go)
	polling  bool                    // the idle poller runs
}

// NewHub returns a hub logging to store.
func NewHub(store coachd.StreamService, logger *slog.Logger) *Hub {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	var b [6]byte
	rand.Read(b[:])
	return &Hub{
		store: store, logger: logger, owner: "proc_" + hex.EncodeToString(b[:]),
		FlushEvery: DefaultFlushEvery, AliveEvery: DefaultAliveEvery, DeadAfter: DefaultDeadAfter,
		PollEvery: DefaultPollEvery, KeepTurns: DefaultKeepTurns,
		live: map[string]*Live{}, idle: map[string]*idleSession{}, begun: make(chan struct{}), shutdown: make(chan struct{}),
	}
}

// Begin starts logging the session's next turn; the caller runs the turn
// with the Live as its event sink and gives it the turn's cancel
// (SetCancel) so that it can be stopped.
func (h *Hub) Begin(ctx context.Context, userID, sessionID string) (*Live, error) {
	turn, err := h.store.BeginTurn(ctx, userID, sessionID, h.owner, h.KeepTurns)
	if err != nil {
		return nil, err
	}
	return h.BeginAt(userID, sessionID, turn), nil
}

// Start is what a turn's admission needs to begin its log in the same
// transaction (agent.TurnRequest.Stream); BeginAt then takes it from there.
func (h *Hub) Start() *coachd.StreamStart {
	return &coachd.StreamStart{Owner: h.owner, Keep: h.KeepTurns}
}

// eventsCap is the room a turn's events get up front: a short reply with
// a tool round fits, where growing from nothing copied them five times.
const eventsCap = 32

// BeginAt is Begin for a turn whose log the store began already (with
// Start's owner and retention), as turn.
func (h *Hub) BeginAt(userID, sessionID string, turn int64) *Live {
	l := &Live{hub: h, user: userID, session: sessionID, turn: turn, changed: make(chan struct{}),
		events: make([]coachd.Event, 0, eventsCap)}
	h.mu.Lock()
	h.live[sessionID] = l
	close(h.begun)
	h.begun = make(chan struct{})
	h.turns.Add(1)
	woken := h.wakeSessionLocked(userID, sessionID)
	h.mu.Unlock()
	wakeAll(woken)
	go l.flushLoop()
	return l
}

// local returns the session's turn running here, if any.
func (h *Hub) local(sessionID string) *Live {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.live[sessionID]
}

// Opening returns the first event of the session's turn (its
// turn_started): from the turn's events here when it runs here, whose
// log may lag by FlushEvery, else from the log; false when neither has
// it yet.
func (h *Hub) Opening(ctx context.Context, userID, sessionID string, turn int64) (coachd.Event, bool, error) {
	if l := h.local(sessionID); l != nil && l.user == userID && l.turn == turn {
		l.mu.Lock()
		var ev coachd.Event
		ok := len(l.events) > 0
		if ok {
			ev = l.events[0]
		}
		l.mu.Unlock()
		if ok {
			return ev, true, nil
		}
	}
	evs, err := h.store.Events(ctx, userID, sessionID, coachd.EventID{Turn: turn}, 1)
	if err != nil || len(evs) == 0 || evs[0].Turn != turn {
		return coachd.Event{}, false, err
	}
	return evs[0], true, nil
}

// waitBegin returns a channel closed when the next turn begins here.
func (h *Hub) waitBegin() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.begun
}

func (h *Hub) done(l *Live) {
	h.mu.Lock()
	if h.live[l.session] == l {
		delete(h.live, l.session)
	}
	h.mu.Unlock()
	h.turns.Done()
}

// Stop stops the session's turn: here at once, elsewhere through the log
// (the process running it learns of it within AliveEvery).
func (h *Hub) Stop(ctx context.Context, userID, sessionID string) error {
	if l := h.local(sessionID); l != nil && l.user == userID {
		l.stop(ErrStopRequested)
		return nil
	}
	return h.store.RequestStop(ctx, userID, sessionID)
}

// Wait waits until no turn runs here, or ctx is done.
func (h *Hub) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { h.turns.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Shutdown ends every reader with a retryable server_shutdown error
// carrying the last event id it sent, and stops the turns still running
// here (they are stored and settled as if their client had left).
func (h *Hub) Shutdown() {
	h.mu.Lock()
	if !h.down {
		h.down = true
		close(h.shutdown)
	}
	live := make([]*Live, 0, len(h.live))
	for _, l := range h.live {
		live = append(live, l)
	}
	var woken []*parked
	for key, is := range h.idle {
		woken = h.wakeLocked(key, is, nil, woken)
	}
	h.mu.Unlock()
	wakeAll(woken) // they find the hub down and end with the notice
	for _, l := range live {
		l.stop(ErrShutdown)
	}
}

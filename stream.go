package coachd

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"
)

// A turn's events are kept in a log so that a client that lost its
// connection, or attaches from another replica or after a restart, can
// follow the turn from where it left: every event has an id "turn:seq",
// turn counting the session's turns from 1 and seq the events of a turn.

// EventID identifies an event within its session; ids order as events
// happened.
type EventID struct {
	Turn int64
	Seq  int64
}

func (id EventID) String() string {
	var b [41]byte
	out := strconv.AppendInt(b[:0], id.Turn, 10)
	out = append(out, ':')
	return string(strconv.AppendInt(out, id.Seq, 10))
}

// Before reports whether id comes before other.
func (id EventID) Before(other EventID) bool {
	return id.Turn < other.Turn || id.Turn == other.Turn && id.Seq < other.Seq
}

// ParseEventID reads "turn:seq"; the empty string is the zero id (before
// every event).
func ParseEventID(s string) (EventID, error) {
	if s == "" {
		return EventID{}, nil
	}
	t, q, ok := strings.Cut(s, ":")
	turn, err1 := strconv.ParseInt(t, 10, 64)
	seq, err2 := strconv.ParseInt(q, 10, 64)
	if !ok || err1 != nil || err2 != nil || turn < 0 || seq < 0 {
		return EventID{}, Invalid(FieldError{Field: "last_event_id", Message: "must be turn:seq, as the id: lines carry it", Code: "format"})
	}
	return EventID{turn, seq}, nil
}

// TurnLog is a session's turn as the event log knows it.
type TurnLog struct {
	Turn      int64
	Owner     string    // the process running it
	StartedAt time.Time // when it began
	AliveAt   time.Time // the last sign of life of the process running it
	// Silent is how long since AliveAt, by the clock that stamped it
	// (the database's on Postgres): replicas' clocks may disagree. On
	// Postgres it counts from the server's start when that is later: no
	// turn could show life while it was down.
	Silent time.Duration
	Ended  bool // its last event (turn_ended) is in the log
	// StopRequested asks the process running the turn to stop it.
	StopRequested bool
}

// StreamService is the event log of turns.
type StreamService interface {
	// BeginTurn starts the session's next turn in the log and returns its
	// number. Events of turns older than keep turns are deleted.
	BeginTurn(ctx context.Context, userID, sessionID, owner string, keep int) (int64, error)
	// AppendEvents adds events of a turn (in order, Turn and Seq set),
	// marks the turn alive, and ended when ended is set. It reports
	// whether a stop was requested, or the turn had ended before (its
	// readers gave it up): no event of it is added then.
	AppendEvents(ctx context.Context, userID, sessionID string, turn int64, events []Event, ended bool) (stop bool, err error)
	// GiveUpTurn logs events as the ending of a turn whose process shows
	// no life, and ends it, only while it has not ended and its last sign
	// of life is still aliveAt (TurnLog.AliveAt as the reader saw it);
	// it reports whether it did.
	GiveUpTurn(ctx context.Context, userID, sessionID string, turn int64, aliveAt time.Time, events []Event) (bool, error)
	// Events returns at most limit of the session's logged events after
	// the given id, in order.
	Events(ctx context.Context, userID, sessionID string, after EventID, limit int) ([]Event, error)
	// LatestTurn returns the session's latest turn in the log; Turn 0
	// when there is none. When pruning by age left none, it is the last
	// turn pruned, ended (its number is never given again).
	LatestTurn(ctx context.Context, userID, sessionID string) (TurnLog, error)
	// TurnLogAt returns the session's turn in the log; Turn 0 when the
	// log has no such turn (never begun, or pruned).
	TurnLogAt(ctx context.Context, userID, sessionID string, turn int64) (TurnLog, error)
	// RequestStop asks whoever runs the session's running turn to stop
	// it; ENOTFOUND when no turn is running (ErrNoTurnRunning) or the
	// session is not the user's.
	RequestStop(ctx context.Context, userID, sessionID string) error
	// PruneEvents deletes the events of turns that started before the
	// given time (and expired stream tokens) and returns how many turns it
	// deleted.
	PruneEvents(ctx context.Context, before time.Time) (int, error)
	// CreateStreamToken records a token (its hash) that lets the user
	// follow one session's stream until expires.
	CreateStreamToken(ctx context.Context, userID, sessionID, tokenHash string, expires time.Time) error
	// StreamTokenUser returns the user an unexpired token for the
	// session belongs to; EUNAUTHORIZED otherwise.
	StreamTokenUser(ctx context.Context, tokenHash, sessionID string) (*User, error)
	// StreamTokenKept reports whether the token for the session is still
	// on record, expired or not: rotating or revoking its user's key
	// deletes it (and pruning, once expired).
	StreamTokenKept(ctx context.Context, tokenHash, sessionID string) (bool, error)
	// FindTurnKey returns the turn the user's chat request was admitted
	// under key (StreamStart.Key), while the log keeps that turn;
	// ENOTFOUND otherwise.
	FindTurnKey(ctx context.Context, userID, key string) (TurnKey, error)
}

// TurnKey is a logged turn a client named with its request's
// Idempotency-Key, and the hash of that request.
type TurnKey struct {
	SessionID string
	Turn      int64
	Hash      string
}

// ErrTurnKeyTaken is AdmitTurn's answer when its StreamStart.Key was
// taken meanwhile (the same request, twice at once): nothing was taken,
// and the caller follows the turn FindTurnKey names.
var ErrTurnKeyTaken = errors.New("coachd: the turn's idempotency key is taken")

// ErrNoTurnRunning is the cause of RequestStop's ENOTFOUND when the
// session, the user's, runs no turn: the session is there.
var ErrNoTurnRunning = errors.New("coachd: no turn is running")

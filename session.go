package coachd

import (
	"context"
	"encoding/json"
	"time"
)

// SessionStatus is the lifecycle state of a session.
type SessionStatus string

const (
	SessionActive    SessionStatus = "active"
	SessionCompleted SessionStatus = "completed"
	SessionExpired   SessionStatus = "expired"
)

// Per-user row caps on conversations (issue 20 finding 8): creating a
// session beyond MaxSessionsPerUser, or appending beyond
// MaxMessagesPerSession, is ECONFLICT with a message that says what to do.
const (
	MaxSessionsPerUser    = 5000
	MaxMessagesPerSession = 5000
)

// Valid reports whether s is one of the known statuses.
func (s SessionStatus) Valid() bool {
	return s == SessionActive || s == SessionCompleted || s == SessionExpired
}

// Session is one conversation between a user and an agent.
type Session struct {
	ID     string        `json:"id"`
	UserID string        `json:"user_id"`
	Agent  string        `json:"agent"`
	Title  string        `json:"title"`
	Mode   string        `json:"mode"` // the structured arc entered, "" for none
	Status SessionStatus `json:"status"`
	// Pending is the interactive tool call the session waits on, if any.
	Pending      *PendingInteraction `json:"pending_interaction,omitempty"`
	MessageCount int64               `json:"message_count"`
	CreatedAt    time.Time           `json:"created_at"`
	UpdatedAt    time.Time           `json:"updated_at"`
}

// PendingInteraction is an interactive tool call waiting for the user's
// answer. Held are the results of the round's other tools, stored with the
// answer when it comes so the round's tool_result message stays whole.
type PendingInteraction struct {
	ToolUseID string          `json:"tool_use_id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	Held      []Block         `json:"held,omitempty"`
	ExpiresAt time.Time       `json:"expires_at"`
	// Kind is PendingApproval for a call waiting for the user's approval
	// before it runs; "" for an interactive tool the user answers.
	Kind string `json:"kind,omitempty"`
	// Reason says why the call needs approval (approval only).
	Reason string `json:"reason,omitempty"`
	// Called are the tools that ran successfully in the turn that paused:
	// the turn that resumes it goes on counting them for the agent's
	// contracts (must_call, its order).
	Called []string `json:"called,omitempty"`
}

// PendingApproval is the Kind of a pending call that waits for the user to
// approve or deny it (requires_approval in the pack).
const PendingApproval = "approval"

// SessionUpdate lists the fields that may change; nil leaves a field alone.
type SessionUpdate struct {
	Title  *string
	Mode   *string
	Status *SessionStatus
	// Pending replaces the pending interaction when SetPending is true
	// (nil clears it).
	SetPending bool
	Pending    *PendingInteraction
}

// SessionService stores sessions, scoped to their user.
type SessionService interface {
	CreateSession(ctx context.Context, s *Session) error
	FindSession(ctx context.Context, userID, id string) (*Session, error)
	// ListSessions returns the user's sessions, newest first.
	ListSessions(ctx context.Context, userID string, page Page) ([]*Session, string, error)
	UpdateSession(ctx context.Context, userID, id string, upd SessionUpdate) (*Session, error)
	DeleteSession(ctx context.Context, userID, id string) error
	// ForkSession starts a new active session of the same agent, title and
	// mode holding copies of the first n messages of the user's session id:
	// a conversation that goes on from an earlier point of id's.
	ForkSession(ctx context.Context, userID, id string, n int64) (*Session, error)
	// AcquireTurn leases the session's one running turn to owner until
	// the given time; a live lease of another owner is ETURNINPROGRESS.
	AcquireTurn(ctx context.Context, userID, sessionID, owner string, until time.Time) error
	// RenewTurn extends owner's lease until the given time, only while
	// the session's lease is still owner's: one another owner took (and
	// may have released since) is ETURNINPROGRESS, never taken back.
	RenewTurn(ctx context.Context, userID, sessionID, owner string, until time.Time) error
	// ReleaseTurn ends owner's lease.
	ReleaseTurn(ctx context.Context, userID, sessionID, owner string) error
}

// FingerprintService remembers which session a conversation, as an
// OpenAI-compatible client resends it, continues.
type FingerprintService interface {
	// SaveFingerprint remembers that the conversation holds the first
	// messages of the session's stored messages (-1: all it has now).
	SaveFingerprint(ctx context.Context, userID, fingerprint, sessionID string, messages int64) error
	// FindFingerprint returns the session id, how many of its messages
	// the conversation holds (-1: not known), and whether another session
	// was saved with it too (shared: two conversations are it), or
	// ENOTFOUND.
	FindFingerprint(ctx context.Context, userID, fingerprint string) (sessionID string, messages int64, shared bool, err error)
}

package coachd

import (
	"context"
	"regexp"
	"slices"
	"time"
)

// PrefixVoice prefixes the IDs of minted voice sessions.
const PrefixVoice = "voice"

// VoiceSession records one short-lived realtime voice secret minted for a
// user: which coach it spoke as, with which provider model and voice, and
// until when the secret could open a connection. The secret itself is
// never stored.
type VoiceSession struct {
	ID        string    `json:"id"`
	UserID    string    `json:"user_id"`
	SessionID string    `json:"session_id,omitempty"` // the chat session transcripts go to
	Agent     string    `json:"agent"`
	Model     string    `json:"model"`
	Voice     string    `json:"voice"`
	ExpiresAt time.Time `json:"expires_at"`
	CreatedAt time.Time `json:"created_at"`
}

// VoiceService records minted voice sessions, scoped to their user.
type VoiceService interface {
	// CreateVoiceSession stores v for its user, filling in ID and
	// CreatedAt. A SessionID must name one of the user's sessions.
	CreateVoiceSession(ctx context.Context, v *VoiceSession) error
	// ListVoiceSessions returns the user's voice sessions, newest first.
	ListVoiceSessions(ctx context.Context, userID string, page Page) ([]*VoiceSession, string, error)
}

// Voices are the voice provider's built-in voices, the only ones an agent
// file or a speech request may name.
var Voices = []string{"alloy", "ash", "ballad", "cedar", "coral", "echo", "fable", "marin", "nova", "onyx", "sage", "shimmer", "verse"}

// ValidVoice reports whether v is one of Voices.
func ValidVoice(v string) bool { return slices.Contains(Voices, v) }

var voiceModelRe = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,99}$`)

// ValidVoiceModel reports whether m can name a provider model
// ("gpt-realtime", "whisper-1").
func ValidVoiceModel(m string) bool { return voiceModelRe.MatchString(m) }

package coachd

import (
	"context"
	"encoding/json"
	"time"
	"unicode"
)

// Role is who wrote a message.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Usage counts tokens as the Messages API reports them.
type Usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens,omitempty"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens,omitempty"`
	// CacheCreation1hInputTokens is the part of CacheCreationInputTokens
	// written to the 1-hour cache, and WebSearchRequests the server web
	// searches: both priced (Cost), neither counted as tokens. coachd's
	// own rounds have neither (it marks only 5-minute breakpoints and
	// offers no server tools); an external loop's recorded usage may.
	CacheCreation1hInputTokens int64 `json:"-"`
	WebSearchRequests          int64 `json:"-"`
}

// TokensOfBytes estimates the tokens of n bytes of text: a quarter,
// rounded up. It prices what no upstream count covers: a request before it
// is sent, and the output a model streamed before the stream was cut.
func TokensOfBytes(n int) int64 { return int64(n+3) / 4 }

// Total is the number of tokens charged against a budget.
func (u Usage) Total() int64 {
	return u.InputTokens + u.OutputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
}

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		InputTokens:              u.InputTokens + o.InputTokens,
		OutputTokens:             u.OutputTokens + o.OutputTokens,
		CacheReadInputTokens:     u.CacheReadInputTokens + o.CacheReadInputTokens,
		CacheCreationInputTokens: u.CacheCreationInputTokens + o.CacheCreationInputTokens,

		CacheCreation1hInputTokens: u.CacheCreation1hInputTokens + o.CacheCreation1hInputTokens,
		WebSearchRequests:          u.WebSearchRequests + o.WebSearchRequests,
	}
}

// Message is one stored message of a session with its full content blocks.
type Message struct {
	ID        string `json:"id"`
	SessionID string `json:"session_id"`
	Seq       int64  `json:"seq"`
	Role      Role   `json:"role"`
	// Content is the readable text (text blocks only).
	Content string `json:"content"`
	// Blocks is the exact list of content blocks sent to or received from
	// the model. Rows stored without blocks read back as one text block.
	Blocks []Block `json:"content_blocks"`
	// Metadata is a JSON object (tool_calls, stop_reason, ...).
	Metadata  json.RawMessage `json:"metadata,omitempty"`
	Usage     *Usage          `json:"usage,omitempty"`
	Partial   bool            `json:"partial"`
	CreatedAt time.Time       `json:"created_at"`
}

// Bytes is about the size of m's contents: its text, metadata and blocks
// (attachments' base64 above all), for bounds on what is read or held.
func (m *Message) Bytes() int {
	n := len(m.Content) + len(m.Metadata)
	for _, b := range m.Blocks {
		n += len(b.Text) + len(b.Thinking) + len(b.Signature) + len(b.Data) + len(b.Input) + len(b.Content) + len(b.Source)
	}
	return n
}

// OnlyBlocks reports whether m has blocks, all of type typ.
func (m *Message) OnlyBlocks(typ string) bool {
	for _, b := range m.Blocks {
		if b.Type != typ {
			return false
		}
	}
	return len(m.Blocks) > 0
}

// Page asks for one page of a listing: at most Limit items after Cursor.
// Cursors are opaque strings returned by the previous page.
type Page struct {
	Cursor string
	Limit  int
	// Before (ListMessages only, instead of Cursor) asks for the items
	// just before it: BeforeEnd for the last page, or the cursor a
	// previous such page returned for the one before it.
	Before string
	// OmitAttachments (ListMessages only) reads the messages' attachments
	// without their data (OmitAttachmentData), for a reader of their
	// words: not megabytes of photos per message.
	OmitAttachments bool
}

// BeforeEnd is the Before of a listing's last page.
const BeforeEnd = "end"

// Page limits.
const (
	DefaultPageLimit = 50
	MaxPageLimit     = 200
)

// MessageService stores the messages of sessions. Every method is scoped to
// the user: a session of another user is ENOTFOUND.
type MessageService interface {
	// AppendMessages appends msgs to the session atomically, assigning
	// SessionID, Seq (contiguous, unique per session), CreatedAt, and ID
	// when empty (a caller may choose a message's ID up front).
	AppendMessages(ctx context.Context, userID, sessionID string, msgs []*Message) error
	// AppendOnce is AppendMessages for a request its client may retry:
	// the last of msgs, as stored, is kept under the user's once.Key in
	// the same transaction, and a later call with the key appends nothing
	// and returns that message (the key with another once.Hash is
	// ECONFLICT). It returns nil when msgs were appended.
	AppendOnce(ctx context.Context, userID, sessionID string, msgs []*Message, once Once) (*Message, error)
	// FindOnce returns the message AppendOnce kept under the user's
	// once.Key, nil when there is none; ECONFLICT for another once.Hash.
	FindOnce(ctx context.Context, userID string, once Once) (*Message, error)
	// ListMessages returns messages in seq order after the cursor, and
	// the next page's cursor; with page.Before, the messages just before
	// it, still in seq order, and the cursor of the page before them.
	ListMessages(ctx context.Context, userID, sessionID string, page Page) ([]*Message, string, error)
	// History returns all of the session's messages in seq order.
	History(ctx context.Context, userID, sessionID string) ([]*Message, error)
	// SetTurnStop records on a stored assistant message, the last reply
	// of its turn, why the turn stopped when the model's own stop reason
	// does not say (metadata.turn_stop_reason: max_rounds, deadline, ...),
	// so history says what the turn's end did. ENOTFOUND when the user
	// has no such assistant message in the session.
	SetTurnStop(ctx context.Context, userID, sessionID, messageID, reason string) error
}

// MaxStopReasonLen bounds a stop reason SetTurnStop records.
const MaxStopReasonLen = 64

// Once names a write a client may send again: its Idempotency-Key
// (scoped to the user) and a hash of the request it came with.
type Once struct {
	Key  string
	Hash string
}

// Blank reports whether s shows nothing to a reader: it holds only
// spaces, control and format characters (zero-width spaces and joiners,
// the BOM, word joiners, bidi marks, soft hyphens), combining marks with
// nothing to sit on, and the other default-ignorable fillers (Hangul
// fillers, the combining grapheme joiner). Such a message says nothing,
// yet would be stored and sent to the model; it is as empty as "".
func Blank(s string) bool {
	for _, r := range s {
		if !unicode.IsSpace(r) && !unicode.In(r, unicode.Cc, unicode.Cf, unicode.Mn, unicode.Me, unicode.Zs, unicode.Zl, unicode.Zp, unicode.Other_Default_Ignorable_Code_Point) {
			return false
		}
	}
	return true
}

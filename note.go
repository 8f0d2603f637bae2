package coachd

import (
	"context"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// NoteVocabulary is what notes may be: their types and categories. A pack
// may define its own (notes.yaml); the default is the rideshare coach's.
type NoteVocabulary struct {
	Types      []string `yaml:"types"`
	Categories []string `yaml:"categories"`
}

// DefaultNoteVocabulary is the vocabulary of a server without a pack
// vocabulary.
var DefaultNoteVocabulary = NoteVocabulary{
	Types:      []string{"preference", "insight", "tip", "feedback", "pattern", "market_update"},
	Categories: []string{"timing", "location", "strategy", "vehicle", "earnings", "safety"},
}

// Note limits.
const (
	NoteTitleMax      = 200
	NoteContentMax    = 5000
	DefaultImportance = 50
)

// Per-user note caps (issue 20 finding 8): a user has at most
// MaxNotesPerUser live notes; creating or restoring one more is
// ECONFLICT. Soft-deleted notes are kept for restore up to
// MaxDeletedNotesPerUser, the oldest deleted beyond that are purged, so a
// create-and-delete loop cannot grow the table either.
const (
	MaxNotesPerUser        = 1000
	MaxDeletedNotesPerUser = 1000
)

// ErrNoteLimit is the ECONFLICT of a note over MaxNotesPerUser.
func ErrNoteLimit() error {
	return Errorf(ECONFLICT, "note limit reached (%d notes): delete some first", MaxNotesPerUser)
}

var marketSlugRe = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// Note is one thing the coach remembers about a user.
type Note struct {
	ID         string     `json:"id"`
	UserID     string     `json:"user_id"`
	Type       string     `json:"note_type"`
	Category   string     `json:"category,omitempty"`
	Title      string     `json:"title"`
	Content    string     `json:"content"`
	Importance int        `json:"importance"`
	MarketSlug string     `json:"market_slug,omitempty"`
	Pinned     bool       `json:"is_pinned"`
	SessionID  string     `json:"session_id,omitempty"` // the session that wrote it, if any
	DeletedAt  *time.Time `json:"deleted_at,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
}

// Validate checks a note's fields (after defaults) and lists every
// problem. With a vocabulary, the type and category must be in it; nil
// checks the rest only (the store, which holds the vocabulary, checks them).
func (n *Note) Validate(v *NoteVocabulary) []FieldError {
	var errs []FieldError
	if n.Type == "" {
		errs = append(errs, FieldError{"note_type", "is required", "required"})
	} else if v != nil && !oneOf(n.Type, v.Types) {
		errs = append(errs, FieldError{"note_type", "must be one of " + strings.Join(v.Types, ", "), "enum"})
	}
	if n.Category != "" && v != nil && !oneOf(n.Category, v.Categories) {
		errs = append(errs, FieldError{"category", "must be one of " + strings.Join(v.Categories, ", "), "enum"})
	}
	if l := utf8.RuneCountInString(n.Title); l < 1 || l > NoteTitleMax {
		errs = append(errs, FieldError{"title", "must be 1 to 200 characters", "length"})
	}
	if l := utf8.RuneCountInString(n.Content); l < 1 || l > NoteContentMax {
		errs = append(errs, FieldError{"content", "must be 1 to 5000 characters", "length"})
	}
	if n.Importance < 1 || n.Importance > 100 {
		errs = append(errs, FieldError{"importance", "must be between 1 and 100", "range"})
	}
	if n.MarketSlug != "" && !ValidMarketSlug(n.MarketSlug) {
		errs = append(errs, FieldError{"market_slug", "must be lowercase letters and digits joined by single hyphens, like dallas-tx", "format"})
	}
	return errs
}

// ValidMarketSlug reports whether s is like "dallas-tx".
func ValidMarketSlug(s string) bool { return len(s) <= 100 && marketSlugRe.MatchString(s) }

func oneOf(s string, set []string) bool {
	for _, v := range set {
		if s == v {
			return true
		}
	}
	return false
}

// NoteFilter narrows a note listing.
type NoteFilter struct {
	Type           string
	Category       string
	Pinned         *bool
	IncludeDeleted bool
}

// NoteUpdate lists the fields that may change; nil leaves a field alone.
type NoteUpdate struct {
	Type       *string
	Category   *string
	Title      *string
	Content    *string
	Importance *int
	MarketSlug *string
	Pinned     *bool
}

// NoteStats counts a user's notes.
type NoteStats struct {
	Total      int64            `json:"total"`
	Pinned     int64            `json:"pinned"`
	Deleted    int64            `json:"deleted"`
	ByType     map[string]int64 `json:"by_type"`
	ByCategory map[string]int64 `json:"by_category"`
}

// NoteService stores notes, scoped to their user. Listings order pinned
// first, then importance (high first), then newest.
type NoteService interface {
	// CreateNote validates and stores n; ECONFLICT when the user already
	// has MaxNotesPerUser live notes.
	CreateNote(ctx context.Context, n *Note) error
	FindNote(ctx context.Context, userID, id string) (*Note, error)
	ListNotes(ctx context.Context, userID string, f NoteFilter, page Page) ([]*Note, string, error)
	// UpdateNote applies upd, validates the result and saves it; a deleted
	// note is ENOTFOUND.
	UpdateNote(ctx context.Context, userID, id string, upd NoteUpdate) (*Note, error)
	TogglePin(ctx context.Context, userID, id string) (*Note, error)
	// DeleteNote soft-deletes the note; the user's deleted notes beyond
	// the newest MaxDeletedNotesPerUser are purged.
	DeleteNote(ctx context.Context, userID, id string) error
	// RestoreNote undeletes the note; ECONFLICT at MaxNotesPerUser.
	RestoreNote(ctx context.Context, userID, id string) (*Note, error)
	NoteStats(ctx context.Context, userID string) (*NoteStats, error)
}

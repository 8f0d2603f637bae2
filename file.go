package coachd

import (
	"context"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// File limits.
const (
	FileNameMax    = 100
	FileContentMax = 100_000 // bytes
	FilePreviewMax = 300
)

// Per-user file caps (issue 20 finding 8): saving a new file beyond
// MaxFilesPerUser, or any save that would take the user's files beyond
// MaxFileBytesPerUser of content in all, is ECONFLICT. Replacing a file
// with a shorter one is always possible.
const (
	MaxFilesPerUser     = 500
	MaxFileBytesPerUser = 20 << 20
)

// FileStatuses are the values of a file's status attribute.
var FileStatuses = []string{"thriving", "good", "okay", "needs_attention", "in_crisis"}

// PrefixFile prefixes file IDs.
const PrefixFile = "file"

// File is one of the user's documents, written by the coach with save_file:
// a domain summary, a day plan, a journal entry. A file is named by its type
// and name; saving the same type and name again replaces it.
type File struct {
	ID         string         `json:"id"`
	UserID     string         `json:"user_id"`
	SessionID  string         `json:"session_id,omitempty"` // the session that last wrote it
	Type       string         `json:"file_type"`
	Name       string         `json:"file_name"`
	Content    string         `json:"content"`
	Attributes FileAttributes `json:"attributes"`
	Bytes      int            `json:"bytes"`
	CreatedAt  time.Time      `json:"created_at"`
	UpdatedAt  time.Time      `json:"updated_at"`
}

// FileAttributes is the structured part of a file, read by the context
// pipeline and by skill rules without parsing the markdown.
type FileAttributes struct {
	Status string `json:"status,omitempty"`
	Rating int    `json:"rating,omitempty"` // 1-10
	// RatingText is a rating given as text that is not 1 to 10 ("2/5"):
	// seed 002's updated_rating is any string.
	RatingText     string   `json:"rating_text,omitempty"`
	Energy         string   `json:"energy,omitempty"`
	Mood           string   `json:"mood,omitempty"`
	DomainsTouched []string `json:"domains_touched,omitempty"`
	PreviewLine    string   `json:"preview_line,omitempty"`
	Timezone       string   `json:"timezone,omitempty"` // IANA name; a profile file sets the user's zone
	// Folded marks a capture already folded into a daily log (seed 002's
	// markCapturesFolded): it is not injected as recent any more.
	Folded bool `json:"folded,omitempty"`
}

// Path is the file's name as the coach sees it: "type/name".
func (f *File) Path() string { return f.Type + "/" + f.Name }

// PulseBaselineType is the file a pulse check's answer is kept in: the
// user's latest ratings, which the context shows as the baseline to
// compare the next check-in with (seed 002's getBaselineRatings). The
// show_pulse_check tool writes it, whatever the coach's permissions.
const PulseBaselineType = "pulse-baseline"

// ValidFileType reports whether t can name a file type: a safe file name
// without spaces.
func ValidFileType(t string) bool { return ValidFileName(t) && !strings.ContainsAny(t, " ") }

// ValidFileName reports whether name is a safe file name: no path
// separators, no "..", no control characters, no invisible format
// characters (bidi overrides and isolates, zero-width spaces and joiners,
// the BOM: "a\u202Egnp.exe" shows as "aexe.png"; issue 20 finding 13) and
// no line or paragraph separators, not too long.
func ValidFileName(name string) bool {
	if name == "" || utf8.RuneCountInString(name) > FileNameMax || !utf8.ValidString(name) {
		return false
	}
	if strings.ContainsAny(name, `/\`) || strings.Contains(name, "..") || strings.TrimSpace(name) != name {
		return false
	}
	for _, r := range name {
		if unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) {
			return false
		}
	}
	return true
}

// Validate checks a file's fields and lists every problem.
func (f *File) Validate() []FieldError {
	var errs []FieldError
	if !ValidFileType(f.Type) {
		errs = append(errs, FieldError{"file_type", "must be a short name without spaces or path characters", "format"})
	}
	if !ValidFileName(f.Name) {
		errs = append(errs, FieldError{"file_name", "must be 1 to 100 characters without /, \\, .., control or invisible formatting characters or surrounding spaces", "format"})
	}
	if len(f.Content) > FileContentMax {
		errs = append(errs, FieldError{"content", "must be at most 100000 bytes", "length"})
	}
	a := f.Attributes
	if a.Status != "" && !oneOf(a.Status, FileStatuses) {
		errs = append(errs, FieldError{"attributes.status", "must be one of thriving, good, okay, needs_attention, in_crisis", "enum"})
	}
	if a.Rating != 0 && (a.Rating < 1 || a.Rating > 10) {
		errs = append(errs, FieldError{"attributes.rating", "must be between 1 and 10", "range"})
	}
	if utf8.RuneCountInString(a.Energy) > 50 || utf8.RuneCountInString(a.Mood) > 50 || utf8.RuneCountInString(a.RatingText) > 50 {
		errs = append(errs, FieldError{"attributes", "energy, mood and updated_rating must be at most 50 characters", "length"})
	}
	if len(a.DomainsTouched) > 20 {
		errs = append(errs, FieldError{"attributes.domains_touched", "must list at most 20 domains", "length"})
	}
	if utf8.RuneCountInString(a.PreviewLine) > FilePreviewMax {
		errs = append(errs, FieldError{"attributes.preview_line", "must be at most 300 characters", "length"})
	}
	if a.Timezone != "" {
		if _, err := time.LoadLocation(a.Timezone); err != nil || len(a.Timezone) > 64 {
			errs = append(errs, FieldError{"attributes.timezone", "must be an IANA time zone like Europe/Paris", "format"})
		}
	}
	return errs
}

// FileFilter narrows a file listing.
type FileFilter struct {
	Type  string    // "" for every type
	Since time.Time // updated at or after; zero for any time
	Limit int       // 0: DefaultPageLimit; at most MaxPageLimit
}

// FileService stores the user's documents, scoped to their user. Listings
// are newest update first.
type FileService interface {
	// SaveFile validates f and creates it, or replaces the user's file of
	// the same type and name, returning when the write has committed.
	// Beyond the per-user caps (MaxFilesPerUser, MaxFileBytesPerUser) it
	// is ECONFLICT.
	SaveFile(ctx context.Context, f *File) error
	FindFile(ctx context.Context, userID, fileType, name string) (*File, error)
	ListFiles(ctx context.Context, userID string, f FileFilter) ([]*File, error)
	// FoldFiles marks the user's files of a type folded (Attributes.Folded)
	// at once, nothing else of them changed; it returns how many it marked.
	FoldFiles(ctx context.Context, userID, fileType string) (int, error)
}

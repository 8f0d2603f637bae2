package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/coachd/coachd"
)

// DefaultFileTypes are the document types save_file accepts when no coach
// pack narrows them.
var DefaultFileTypes = []string{
	"domain", "overview", "life-plan", "check-in", "daily-log", "day-plan",
	"weekly-plan", "sage-context", "sage-patterns", "capture", "reflection-prompt", "profile",
}

// SaveFile writes one of the user's documents. The file types it accepts
// are Types; which of them may be written depends on the session's mode
// and is asked of Policy on every call, with the mode read fresh from the
// store (a structured arc entered in this very round counts).
type SaveFile struct {
	Types  []string // nil: DefaultFileTypes
	Policy Policy   // nil: every type in Types, in every mode
}

func (t SaveFile) types() []string {
	if len(t.Types) == 0 {
		return DefaultFileTypes
	}
	return t.Types
}

func (t SaveFile) Definition() coachd.ToolDef {
	return coachd.ToolDef{
		Name: "save_file",
		Description: "Save or replace one of the user's documents (markdown). Saving the same file_type and file_name again replaces it. " +
			"Which file types may be written depends on the session mode. Returns {success, path, bytes} once the write is stored.",
		Category: coachd.ToolInstant,
		InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "file_type": {"type": "string", "enum": ` + enumJSON(t.types()) + `},
    "file_name": {"type": "string", "minLength": 1, "maxLength": 100, "description": "defaults to the file type; use a date (2026-03-01) for dated files"},
    "content": {"type": "string", "maxLength": 100000},
    "attributes": {
      "type": "object",
      "properties": {
        "status": {"type": "string", "enum": ` + fileStatusEnum + `},
        "rating": {"type": "integer", "minimum": 1, "maximum": 10},
        "updated_rating": {"type": "string", "maxLength": 50, "description": "the rating as text: 1 to 10 is kept as the rating, anything else (2/5) as written"},
        "energy": {"type": "string", "maxLength": 50},
        "mood": {"type": "string", "maxLength": 50},
        "mood_signal": {"type": "string", "maxLength": 50, "description": "Sage's name for mood"},
        "domains_touched": {"type": "array", "items": {"type": "string", "maxLength": 50}, "maxItems": 20},
        "preview_line": {"type": "string", "maxLength": 300},
        "timezone": {"type": "string", "maxLength": 64}
      },
      "additionalProperties": false
    }
  },
  "required": ["file_type", "content"],
  "additionalProperties": false
}`),
		Truncate: []string{"content"},
	}
}

type saveFileInput struct {
	Type       string         `json:"file_type"`
	Name       string         `json:"file_name"`
	Content    string         `json:"content"`
	Attributes fileAttributes `json:"attributes"`
}

// fileAttributes are coachd's attributes plus seed 002's names for two of
// them: updated_rating (any text) for rating, mood_signal for mood.
type fileAttributes struct {
	coachd.FileAttributes
	UpdatedRating string `json:"updated_rating"`
	MoodSignal    string `json:"mood_signal"`
}

// attributes folds the seed's names into coachd's: an updated_rating of 1
// to 10 ("7", "7/10") is the rating, any other text ("2/5") is kept as
// rating_text.
func (a fileAttributes) attributes() (coachd.FileAttributes, error) {
	out := a.FileAttributes
	if r := strings.TrimSpace(a.UpdatedRating); r != "" && out.Rating == 0 {
		if utf8.RuneCountInString(r) > 50 {
			return out, fmt.Errorf("attributes.updated_rating must be at most 50 characters")
		}
		if n, err := strconv.Atoi(strings.TrimSuffix(r, "/10")); err == nil && n >= 1 && n <= 10 {
			out.Rating = n
		} else {
			out.RatingText = r
		}
	}
	if out.Mood == "" {
		out.Mood = a.MoodSignal
	}
	return out, nil
}

func (t SaveFile) Execute(ctx context.Context, call coachd.ToolCall, env coachd.ToolEnv) (coachd.ToolResult, error) {
	var in saveFileInput
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return refuse("invalid input: " + err.Error())
	}
	sess, err := env.Store.FindSession(ctx, env.User.ID, env.Session.ID)
	if err != nil {
		return coachd.ToolResult{}, err
	}
	if sess.Status != coachd.SessionActive {
		return refuse(fmt.Sprintf("not saved: the session is %s", sess.Status))
	}
	if !slices.Contains(t.types(), in.Type) {
		return refuse(fmt.Sprintf("not saved: unknown file_type %q", in.Type))
	}
	if t.Policy != nil {
		allowed := t.Policy.WritableTypes(sess.Agent, sess.Mode)
		if !slices.Contains(allowed, in.Type) {
			mode := sess.Mode
			if mode == "" {
				mode = "default"
			}
			return refuse(fmt.Sprintf("not saved: %s files may not be written in %s mode; allowed here: [%s]",
				in.Type, mode, strings.Join(allowed, ", ")))
		}
	}
	if in.Name == "" {
		in.Name = in.Type
	}
	attrs, err := in.Attributes.attributes()
	if err != nil {
		return refuse("not saved: " + err.Error())
	}
	f := &coachd.File{UserID: env.User.ID, SessionID: sess.ID, Type: in.Type, Name: in.Name,
		Content: in.Content, Attributes: attrs}
	if errs := f.Validate(); len(errs) > 0 {
		return refuse("not saved: " + fieldText(errs))
	}
	if err := env.Store.SaveFile(ctx, f); err != nil {
		if code := coachd.ErrorCode(err); code == coachd.EINVALID || code == coachd.ECONFLICT { // e.g. the file caps
			return refuse("not saved: " + coachd.ErrorMessage(err))
		}
		return coachd.ToolResult{}, err
	}
	out := map[string]any{"success": true, "path": f.Path(), "bytes": f.Bytes}
	if f.Type == DailyLogType {
		n, err := foldCaptures(ctx, env)
		if err != nil {
			return coachd.ToolResult{}, err
		}
		out["captures_folded"] = n
	}
	return jsonResult(out)
}

// DailyLogType and CaptureType are seed 002's journal and quick notes: a
// saved daily log folds the captures waiting for it.
const (
	DailyLogType = "daily-log"
	CaptureType  = "capture"
)

// foldCaptures marks the user's unfolded captures as folded into the daily
// log just saved (seed 002 did this in the client after the journal write;
// here it happens with the write). The store marks them all at once and
// changes nothing else: read and saved back whole, a capture the user
// rewrote meanwhile got its old words back, and past one listing (200)
// the older ones were never folded.
func foldCaptures(ctx context.Context, env coachd.ToolEnv) (int, error) {
	return env.Store.FoldFiles(ctx, env.User.ID, CaptureType)
}

// ReadFile reads one of the user's documents.
type ReadFile struct{}

func (ReadFile) Definition() coachd.ToolDef {
	return coachd.ToolDef{
		Name:        "read_file",
		Description: "Read one of the user's documents by file_type and file_name (file_name defaults to the file type).",
		Category:    coachd.ToolInstant,
		InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "file_type": {"type": "string", "minLength": 1, "maxLength": 100},
    "file_name": {"type": "string", "minLength": 1, "maxLength": 100}
  },
  "required": ["file_type"],
  "additionalProperties": false
}`),
	}
}

func (ReadFile) Execute(ctx context.Context, call coachd.ToolCall, env coachd.ToolEnv) (coachd.ToolResult, error) {
	var in struct {
		Type string `json:"file_type"`
		Name string `json:"file_name"`
	}
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return refuse("invalid input: " + err.Error())
	}
	if in.Name == "" {
		in.Name = in.Type
	}
	if !coachd.ValidFileName(in.Type) || !coachd.ValidFileName(in.Name) {
		return refuse("invalid file_type or file_name")
	}
	f, err := env.Store.FindFile(ctx, env.User.ID, in.Type, in.Name)
	if coachd.ErrorCode(err) == coachd.ENOTFOUND {
		return refuse(fmt.Sprintf("no file %s/%s; list_files shows what exists", in.Type, in.Name))
	}
	if err != nil {
		return coachd.ToolResult{}, err
	}
	return jsonResult(map[string]any{
		"path": f.Path(), "content": f.Content, "attributes": f.Attributes, "updated_at": f.UpdatedAt,
	})
}

// ListFiles lists the user's documents, newest first.
type ListFiles struct{}

func (ListFiles) Definition() coachd.ToolDef {
	return coachd.ToolDef{
		Name:        "list_files",
		Description: "List the user's documents, newest first, optionally of one file_type: path, size, status and preview line.",
		Category:    coachd.ToolInstant,
		InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "file_type": {"type": "string", "minLength": 1, "maxLength": 100},
    "limit": {"type": "integer", "minimum": 1, "maximum": 100}
  },
  "additionalProperties": false
}`),
	}
}

func (ListFiles) Execute(ctx context.Context, call coachd.ToolCall, env coachd.ToolEnv) (coachd.ToolResult, error) {
	var in struct {
		Type  string `json:"file_type"`
		Limit int    `json:"limit"`
	}
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return refuse("invalid input: " + err.Error())
	}
	if in.Limit == 0 {
		in.Limit = 30
	}
	files, err := env.Store.ListFiles(ctx, env.User.ID, coachd.FileFilter{Type: in.Type, Limit: in.Limit})
	if err != nil {
		return coachd.ToolResult{}, err
	}
	type item struct {
		Path      string `json:"path"`
		Bytes     int    `json:"bytes"`
		UpdatedAt string `json:"updated_at"`
		Status    string `json:"status,omitempty"`
		Preview   string `json:"preview_line,omitempty"`
	}
	out := make([]item, len(files))
	for i, f := range files {
		out[i] = item{f.Path(), f.Bytes, f.UpdatedAt.Format("2006-01-02T15:04Z07:00"), f.Attributes.Status, f.Attributes.PreviewLine}
	}
	return jsonResult(map[string]any{"count": len(out), "files": out})
}

package tools

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/coachd/coachd"
)

// SaveNote stores a note about the user: the coach's memory.
type SaveNote struct {
	Vocab *coachd.NoteVocabulary // nil: coachd.DefaultNoteVocabulary
}

func (t SaveNote) Definition() coachd.ToolDef {
	return coachd.ToolDef{
		Name:        "save_note",
		Description: "Remember something about the user for future sessions: a preference, an insight, a tip that worked, feedback, or a pattern.",
		Category:    coachd.ToolInstant,
		InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "note_type": {"type": "string", "enum": ` + enumJSON(vocab(t.Vocab).Types) + `},
    "category": {"type": "string", "enum": ` + enumJSON(vocab(t.Vocab).Categories) + `},
    "title": {"type": "string", "minLength": 1, "maxLength": 200},
    "content": {"type": "string", "minLength": 1, "maxLength": 5000},
    "importance": {"type": "integer", "minimum": 1, "maximum": 100},
    "market_slug": {"type": "string", "maxLength": 100, "pattern": "^[a-z0-9]+(-[a-z0-9]+)*$"}
  },
  "required": ["note_type", "title", "content"],
  "additionalProperties": false
}`),
	}
}

type saveNoteInput struct {
	Type       string `json:"note_type"`
	Category   string `json:"category"`
	Title      string `json:"title"`
	Content    string `json:"content"`
	Importance int    `json:"importance"`
	MarketSlug string `json:"market_slug"`
}

func (t SaveNote) Execute(ctx context.Context, call coachd.ToolCall, env coachd.ToolEnv) (coachd.ToolResult, error) {
	var in saveNoteInput
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return refuse("input is not a valid note: " + err.Error())
	}
	n := &coachd.Note{
		UserID: env.User.ID, SessionID: env.Session.ID, Type: in.Type, Category: in.Category,
		Title: in.Title, Content: in.Content, Importance: in.Importance, MarketSlug: in.MarketSlug,
	}
	if n.Importance == 0 {
		n.Importance = coachd.DefaultImportance
	}
	if errs := n.Validate(vocab(t.Vocab)); len(errs) > 0 {
		return refuse("note not saved: " + fieldText(errs))
	}
	create := env.Store.CreateNote
	if env.StageNote != nil {
		// Stored with the round (ToolEnv.StageNote); refused here at the cap.
		create = func(_ context.Context, n *coachd.Note) error { return env.StageNote(n) }
	}
	if err := create(ctx, n); err != nil {
		if code := coachd.ErrorCode(err); code == coachd.EINVALID || code == coachd.ECONFLICT { // e.g. the note cap
			return refuse("note not saved: " + coachd.ErrorMessage(err))
		}
		return coachd.ToolResult{}, err
	}
	return jsonResult(map[string]any{"success": true, "note_id": n.ID, "title": n.Title})
}

// ListNotes recalls the user's notes.
type ListNotes struct {
	Vocab *coachd.NoteVocabulary // nil: coachd.DefaultNoteVocabulary
}

func (t ListNotes) Definition() coachd.ToolDef {
	return coachd.ToolDef{
		Name:        "list_notes",
		Description: "Recall notes saved about the user, pinned and most important first. Optionally filter by note_type or category.",
		Category:    coachd.ToolInstant,
		InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "note_type": {"type": "string", "enum": ` + enumJSON(vocab(t.Vocab).Types) + `},
    "category": {"type": "string", "enum": ` + enumJSON(vocab(t.Vocab).Categories) + `},
    "limit": {"type": "integer", "minimum": 1, "maximum": 50}
  },
  "additionalProperties": false
}`),
	}
}

func (ListNotes) Execute(ctx context.Context, call coachd.ToolCall, env coachd.ToolEnv) (coachd.ToolResult, error) {
	var in struct {
		Type     string `json:"note_type"`
		Category string `json:"category"`
		Limit    int    `json:"limit"`
	}
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return refuse("invalid input: " + err.Error())
	}
	if in.Limit == 0 {
		in.Limit = 20
	}
	notes, _, err := env.Store.ListNotes(ctx, env.User.ID, coachd.NoteFilter{Type: in.Type, Category: in.Category}, coachd.Page{Limit: in.Limit})
	if err != nil {
		return coachd.ToolResult{}, err
	}
	type item struct {
		ID         string `json:"id"`
		Type       string `json:"note_type"`
		Category   string `json:"category,omitempty"`
		Title      string `json:"title"`
		Content    string `json:"content"`
		Importance int    `json:"importance"`
		MarketSlug string `json:"market_slug,omitempty"`
		Pinned     bool   `json:"is_pinned,omitempty"`
	}
	out := make([]item, len(notes))
	for i, n := range notes {
		out[i] = item{n.ID, n.Type, n.Category, n.Title, n.Content, n.Importance, n.MarketSlug, n.Pinned}
	}
	return jsonResult(map[string]any{"count": len(out), "notes": out})
}

func fieldText(errs []coachd.FieldError) string {
	parts := make([]string, len(errs))
	for i, e := range errs {
		parts[i] = e.Field + " " + e.Message
	}
	return strings.Join(parts, "; ")
}

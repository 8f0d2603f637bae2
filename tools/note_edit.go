package tools

import (
	"context"
	"encoding/json"

	"github.com/coachd/coachd"
)

// UpdateNote changes fields of one of the user's notes.
type UpdateNote struct {
	Vocab *coachd.NoteVocabulary // nil: coachd.DefaultNoteVocabulary
}

func (t UpdateNote) Definition() coachd.ToolDef {
	return coachd.ToolDef{
		Name:        "update_note",
		Description: "Correct or refine a saved note by its id (from list_notes). Only the fields given change.",
		Category:    coachd.ToolInstant,
		InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "note_id": {"type": "string", "minLength": 1, "maxLength": 100},
    "note_type": {"type": "string", "enum": ` + enumJSON(vocab(t.Vocab).Types) + `},
    "category": {"type": "string", "enum": ` + enumJSON(vocab(t.Vocab).Categories) + `},
    "title": {"type": "string", "minLength": 1, "maxLength": 200},
    "content": {"type": "string", "minLength": 1, "maxLength": 5000},
    "importance": {"type": "integer", "minimum": 1, "maximum": 100},
    "market_slug": {"type": "string", "maxLength": 100, "pattern": "^[a-z0-9]+(-[a-z0-9]+)*$"}
  },
  "required": ["note_id"],
  "additionalProperties": false
}`),
	}
}

func (UpdateNote) Execute(ctx context.Context, call coachd.ToolCall, env coachd.ToolEnv) (coachd.ToolResult, error) {
	var in struct {
		ID         string  `json:"note_id"`
		Type       *string `json:"note_type"`
		Category   *string `json:"category"`
		Title      *string `json:"title"`
		Content    *string `json:"content"`
		Importance *int    `json:"importance"`
		MarketSlug *string `json:"market_slug"`
	}
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return refuse("invalid input: " + err.Error())
	}
	if !coachd.ValidID(coachd.PrefixNote, in.ID) {
		return refuse("no such note: note_id must be an id from list_notes")
	}
	n, err := env.Store.UpdateNote(ctx, env.User.ID, in.ID, coachd.NoteUpdate{
		Type: in.Type, Category: in.Category, Title: in.Title, Content: in.Content, Importance: in.Importance,
		MarketSlug: in.MarketSlug,
	})
	switch coachd.ErrorCode(err) {
	case "":
		return jsonResult(map[string]any{"success": true, "note_id": n.ID, "title": n.Title})
	case coachd.ENOTFOUND, coachd.EINVALID:
		return refuse("note not updated: " + coachd.ErrorMessage(err))
	}
	return coachd.ToolResult{}, err
}

// PinNote pins or unpins a note: pinned notes are always in the context.
type PinNote struct{}

func (PinNote) Definition() coachd.ToolDef {
	return coachd.ToolDef{
		Name:        "pin_note",
		Description: "Pin a note so it is always in your context (pinned: true), or unpin it (pinned: false). Without pinned, the pin is toggled.",
		Category:    coachd.ToolInstant,
		InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "note_id": {"type": "string", "minLength": 1, "maxLength": 100},
    "pinned": {"type": "boolean"}
  },
  "required": ["note_id"],
  "additionalProperties": false
}`),
	}
}

func (PinNote) Execute(ctx context.Context, call coachd.ToolCall, env coachd.ToolEnv) (coachd.ToolResult, error) {
	var in struct {
		ID     string `json:"note_id"`
		Pinned *bool  `json:"pinned"`
	}
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return refuse("invalid input: " + err.Error())
	}
	if !coachd.ValidID(coachd.PrefixNote, in.ID) {
		return refuse("no such note: note_id must be an id from list_notes")
	}
	var n *coachd.Note
	var err error
	if in.Pinned == nil {
		n, err = env.Store.TogglePin(ctx, env.User.ID, in.ID)
	} else {
		n, err = env.Store.UpdateNote(ctx, env.User.ID, in.ID, coachd.NoteUpdate{Pinned: in.Pinned})
	}
	switch coachd.ErrorCode(err) {
	case "":
		return jsonResult(map[string]any{"success": true, "note_id": n.ID, "is_pinned": n.Pinned})
	case coachd.ENOTFOUND:
		return refuse("note not found: " + in.ID)
	}
	return coachd.ToolResult{}, err
}

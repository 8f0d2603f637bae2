package tools

import (
	"context"
	"encoding/json"

	"github.com/coachd/coachd"
)

// ShowOptions offers the user a few choices as tappable options. It is
// interactive: the turn pauses until the user picks one (or writes a message
// instead), and the pick becomes the tool's result.
type ShowOptions struct{}

func (ShowOptions) Definition() coachd.ToolDef {
	return coachd.ToolDef{
		Name:        "show_options",
		Description: "Offer the user 2 to 6 short choices to tap. The turn pauses until the user picks one; their pick is the tool result.",
		Category:    coachd.ToolInteractive,
		InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "prompt": {"type": "string", "maxLength": 500},
    "options": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 200}, "minItems": 2, "maxItems": 6}
  },
  "required": ["options"],
  "additionalProperties": false
}`),
		ResultSchema: json.RawMessage(`{"type": "string", "minLength": 1, "maxLength": 2000}`),
	}
}

// Execute is never called for interactive tools; the runner pauses the turn
// instead.
func (ShowOptions) Execute(context.Context, coachd.ToolCall, coachd.ToolEnv) (coachd.ToolResult, error) {
	return coachd.ToolResult{}, coachd.Errorf(coachd.EINTERNAL, "show_options is answered by the user")
}

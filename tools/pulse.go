package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/coachd/coachd"
)

// ShowPulseCheck asks the user to rate how their life domains feel. It is
// interactive: the turn pauses until the client answers with ratings,
// which are validated against the result schema before the turn resumes.
type ShowPulseCheck struct{}

func (ShowPulseCheck) Definition() coachd.ToolDef {
	return coachd.ToolDef{
		Name:        "show_pulse_check",
		Description: "Show the user a pulse check: they rate each domain from 1 (in crisis) to 5 (thriving). The turn pauses until they submit; the ratings are the tool result.",
		Category:    coachd.ToolInteractive,
		InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "context": {"type": "string", "minLength": 1, "maxLength": 500},
    "domains": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 50}, "minItems": 1, "maxItems": 12}
  },
  "required": ["context"],
  "additionalProperties": false
}`),
		ResultSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "ratings": {
      "type": "array", "minItems": 1, "maxItems": 12,
      "items": {
        "type": "object",
        "properties": {
          "domain": {"type": "string", "minLength": 1, "maxLength": 50},
          "rating": {"type": "integer", "minimum": 1, "maximum": 5}
        },
        "required": ["domain", "rating"],
        "additionalProperties": false
      }
    },
    "note": {"type": "string", "maxLength": 1000}
  },
  "required": ["ratings"],
  "additionalProperties": false
}`),
	}
}

// Execute is never called for interactive tools; the runner pauses the turn
// instead.
func (ShowPulseCheck) Execute(context.Context, coachd.ToolCall, coachd.ToolEnv) (coachd.ToolResult, error) {
	return coachd.ToolResult{}, coachd.Errorf(coachd.EINTERNAL, "show_pulse_check is answered by the user")
}

// PulseBaselineType is the file a pulse check's answer is kept in.
const PulseBaselineType = coachd.PulseBaselineType

// RecordAnswer keeps the ratings as the pulse baseline file.
func (ShowPulseCheck) RecordAnswer(ctx context.Context, env coachd.ToolEnv, answer json.RawMessage) error {
	var in struct {
		Ratings []struct {
			Domain string `json:"domain"`
			Rating int    `json:"rating"`
		} `json:"ratings"`
		Note string `json:"note"`
	}
	if err := json.Unmarshal(answer, &in); err != nil || len(in.Ratings) == 0 {
		return err
	}
	parts := make([]string, len(in.Ratings))
	for i, r := range in.Ratings {
		parts[i] = fmt.Sprintf("%s %d/5", r.Domain, r.Rating)
	}
	day := now(env).Format(time.DateOnly) // the user's day, as the context dates the turn
	content := fmt.Sprintf("Pulse check of %s: %s.", day, strings.Join(parts, ", "))
	if in.Note != "" {
		content += " Note: " + in.Note
	}
	return env.Store.SaveFile(ctx, &coachd.File{
		UserID: env.User.ID, SessionID: env.Session.ID, Type: PulseBaselineType, Name: PulseBaselineType, Content: content,
		Attributes: coachd.FileAttributes{PreviewLine: preview(strings.Join(parts, ", "))},
	})
}

// preview cuts line to a file's preview line's length (twelve domains of
// fifty characters can be longer), with an ellipsis.
func preview(line string) string {
	if utf8.RuneCountInString(line) <= coachd.FilePreviewMax {
		return line
	}
	r := []rune(line)
	return string(r[:coachd.FilePreviewMax-1]) + "…"
}

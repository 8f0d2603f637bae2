package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/coachd/coachd"
)

var arcNameRe = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,49}$`)

// EnterArc switches the session into a structured arc (life mapping, a
// weekly check-in...). The session's mode is the arc: it changes which
// files save_file may write until complete_session {type: arc}.
type EnterArc struct {
	Policy Policy // nil: any well-formed arc name
}

func (EnterArc) Definition() coachd.ToolDef {
	return coachd.ToolDef{
		Name:        "enter_structured_arc",
		Description: "Enter a structured arc (for example life_mapping or weekly_checkin). The session mode becomes the arc, which changes what save_file may write, until complete_session with type arc.",
		Category:    coachd.ToolLifecycle,
		InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "arc": {"type": "string", "pattern": "^[a-z][a-z0-9_-]{0,49}$"}
  },
  "required": ["arc"],
  "additionalProperties": false
}`),
	}
}

func (t EnterArc) Execute(ctx context.Context, call coachd.ToolCall, env coachd.ToolEnv) (coachd.ToolResult, error) {
	var in struct {
		Arc string `json:"arc"`
	}
	if err := json.Unmarshal(call.Input, &in); err != nil || !arcNameRe.MatchString(in.Arc) {
		return refuse("invalid input: arc must be a lowercase name like life_mapping")
	}
	sess, err := env.Store.FindSession(ctx, env.User.ID, env.Session.ID)
	if err != nil {
		return coachd.ToolResult{}, err
	}
	if sess.Status != coachd.SessionActive {
		return refuse(fmt.Sprintf("cannot enter an arc: the session is %s", sess.Status))
	}
	if t.Policy != nil {
		if arcs := t.Policy.Arcs(sess.Agent); len(arcs) > 0 && !slices.Contains(arcs, in.Arc) {
			return refuse(fmt.Sprintf("unknown arc %q; available: [%s]", in.Arc, strings.Join(arcs, ", ")))
		}
	}
	result := map[string]any{"success": true, "mode": in.Arc}
	if t.Policy != nil {
		result["writable_file_types"] = t.Policy.WritableTypes(sess.Agent, in.Arc)
	}
	if sess.Mode == in.Arc {
		result["already_in_arc"] = true
		return jsonResult(result)
	}
	if sess.Mode != "" {
		result["left_arc"] = sess.Mode
	}
	mode := in.Arc
	if _, err := env.Store.UpdateSession(ctx, env.User.ID, sess.ID, coachd.SessionUpdate{Mode: &mode}); err != nil {
		return coachd.ToolResult{}, err
	}
	env.Session.Mode = mode
	env.Emit(coachd.Event{Type: coachd.EventSessionChanged, Change: coachd.ChangeModeEntered, Mode: mode})
	return jsonResult(result)
}

package tools

import (
	"context"
	"encoding/json"
	"time"

	"github.com/coachd/coachd"
)

// CompleteSession ends the session (type session) or the structured arc the
// session is in (type arc). With a pack whose agent has a check-in cadence,
// completing the session says when the next check-in is due (seed 002's
// next_checkin_due).
type CompleteSession struct {
	Policy Policy // nil: no check-in cadence
}

func (CompleteSession) Definition() coachd.ToolDef {
	return coachd.ToolDef{
		Name:        "complete_session",
		Description: "Mark the conversation complete when the user is done (type session), or finish the structured arc in progress (type arc).",
		Category:    coachd.ToolLifecycle,
		InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "type": {"type": "string", "enum": ["session", "arc"]},
    "summary": {"type": "string", "maxLength": 2000}
  },
  "required": ["type"],
  "additionalProperties": false
}`),
	}
}

func (t CompleteSession) Execute(ctx context.Context, call coachd.ToolCall, env coachd.ToolEnv) (coachd.ToolResult, error) {
	var in struct {
		Type    string `json:"type"`
		Summary string `json:"summary"`
	}
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return refuse("invalid input: " + err.Error())
	}
	// Read the status fresh: the check must be ours, never the database's
	// CHECK constraint failing.
	sess, err := env.Store.FindSession(ctx, env.User.ID, env.Session.ID)
	if err != nil {
		return coachd.ToolResult{}, err
	}
	switch sess.Status {
	case coachd.SessionExpired:
		// Seed 002's executeCompleteSession returns this (not throws): a
		// result, not an error, in the seed's key order.
		return jsonResult(sessionExpired{Error: "session_expired",
			Message: "Session expired before completion. Starting fresh next time."})
	case coachd.SessionCompleted:
		return jsonResult(map[string]any{"success": true, "already_completed": true})
	}
	if in.Type == "arc" {
		if sess.Mode == "" {
			return refuse("No structured arc is in progress; nothing to complete. Use type session to end the conversation.")
		}
		empty := ""
		if _, err := env.Store.UpdateSession(ctx, env.User.ID, sess.ID, coachd.SessionUpdate{Mode: &empty}); err != nil {
			return coachd.ToolResult{}, err
		}
		env.Session.Mode = "" // the turn's next rounds are out of the arc (their skills)
		env.Emit(coachd.Event{Type: coachd.EventSessionChanged, Change: coachd.ChangeArcCompleted, Mode: sess.Mode})
		return jsonResult(map[string]any{"success": true, "arc": sess.Mode})
	}
	done := coachd.SessionCompleted
	if _, err := env.Store.UpdateSession(ctx, env.User.ID, sess.ID, coachd.SessionUpdate{Status: &done}); err != nil {
		return coachd.ToolResult{}, err
	}
	env.Emit(coachd.Event{Type: coachd.EventSessionChanged, Change: coachd.ChangeCompleted})
	out := map[string]any{"success": true, "status": "completed"}
	if due, ok, err := t.nextCheckin(ctx, env, sess.Agent); err != nil {
		return coachd.ToolResult{}, err
	} else if ok {
		out["next_checkin_due"] = due
	}
	return jsonResult(out)
}

// sessionExpired is complete_session's answer on an expired session.
type sessionExpired struct {
	Success bool   `json:"success"` // false
	Error   string `json:"error"`
	Message string `json:"message"`
}

// nextCheckin is the date (YYYY-MM-DD, in the user's zone, as the context
// dates the turn) the next check-in is due: every_days after the newest
// check-in file, today when there is none.
func (t CompleteSession) nextCheckin(ctx context.Context, env coachd.ToolEnv, agent string) (string, bool, error) {
	if t.Policy == nil {
		return "", false, nil
	}
	fileType, every := t.Policy.Checkin(agent)
	if every < 1 {
		return "", false, nil
	}
	due := now(env)
	files, err := env.Store.ListFiles(ctx, env.User.ID, coachd.FileFilter{Type: fileType, Limit: 1})
	if err != nil {
		return "", false, err
	}
	if len(files) > 0 {
		due = files[0].UpdatedAt.In(due.Location()).AddDate(0, 0, every)
	}
	return due.Format(time.DateOnly), true, nil
}

package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/coachd/coachd"
)

// A call that needs approval pauses the turn as an interactive tool does:
// the round's other calls run, the assistant message is stored, and the
// session holds a pending record (kind approval) with the other results.
// The answer, {"approved": bool, "reason"} (or "approve" / "deny"), comes
// as the next turn's tool_result: an approved call runs then, at most once
// (the pending record is cleared before it runs), and a denied one is
// answered with an is_error refusal the model reads. A plain message
// instead of an answer denies the call.

// MaxApprovalReason bounds the reason a user gives with an answer.
const MaxApprovalReason = 1000

// DeniedText begins the result of a call the user denied.
const DeniedText = "The user denied this call"

// needsApproval says why call c of tool must wait for the user's approval.
func (t *Turn) needsApproval(tool coachd.Tool, c coachd.ToolCall) (string, bool) {
	def := tool.Definition()
	def.Name = c.Name // a bound tool answers to the name it was called by
	return t.agent.ApprovalReason(def, c.Input)
}

// pause is the pending record of the round's paused call c and the event
// that tells the client.
func (t *Turn) pause(c coachd.ToolCall, held []coachd.Block) (*coachd.PendingInteraction, coachd.Event) {
	p := &coachd.PendingInteraction{
		ToolUseID: c.ID, Name: c.Name, Input: c.Input, Held: held,
		ExpiresAt: t.r.cfg.Clock.Now().Add(t.r.cfg.InteractionTTL),
		Called:    slices.Sorted(maps.Keys(t.x.called)),
	}
	ev := coachd.Event{Type: coachd.EventInteractionRequested, ToolUseID: c.ID, ToolName: c.Name, Input: c.Input, ExpiresAt: p.ExpiresAt}
	if t.ap.reason != "" {
		p.Kind, p.Reason = coachd.PendingApproval, t.ap.reason
		ev.Type, ev.Reason = coachd.EventApprovalRequired, t.ap.reason
	}
	return p, ev
}

// approvalAnswer is the user's decision on a call waiting for approval.
type approvalAnswer struct {
	Approved bool
	Reason   string
}

// parseApproval reads an answer: {"approved": bool, "reason": "..."}, or
// the strings "approve" / "deny" (what a client that shows the choice as
// options sends back).
func parseApproval(raw json.RawMessage) (approvalAnswer, error) {
	bad := coachd.Invalid(coachd.FieldError{Field: "tool_result.content",
		Message: `must be {"approved": true|false, "reason": "..."} or "approve" / "deny"`, Code: "approval"})
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "approve", "approved", "yes":
			return approvalAnswer{Approved: true}, nil
		case "deny", "denied", "no":
			return approvalAnswer{}, nil
		}
		return approvalAnswer{}, bad
	}
	var obj struct {
		Approved *bool  `json:"approved"`
		Reason   string `json:"reason"`
	}
	if err := strictUnmarshal(raw, &obj); err != nil || obj.Approved == nil {
		return approvalAnswer{}, bad
	}
	if utf8.RuneCountInString(obj.Reason) > MaxApprovalReason {
		return approvalAnswer{}, coachd.Invalid(coachd.FieldError{Field: "tool_result.content.reason",
			Message: fmt.Sprintf("must be at most %d characters", MaxApprovalReason), Code: "length"})
	}
	return approvalAnswer{Approved: *obj.Approved, Reason: strings.TrimSpace(obj.Reason)}, nil
}

func strictUnmarshal(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// validateAnswer checks an answer against the pending call: an approval
// decision, or the interactive tool's result schema.
func (t *Turn) validateAnswer(p *coachd.PendingInteraction, content json.RawMessage) error {
	if p.Kind == coachd.PendingApproval {
		_, err := parseApproval(content)
		return err
	}
	if err := t.tools.ValidateResult(p.Name, content); err != nil {
		e := coachd.AsError(err)
		for i := range e.Details {
			e.Details[i].Field = "tool_result.content." + e.Details[i].Field
		}
		return e
	}
	return nil
}

// approvalState is a turn's part in approvals: the reason its round's
// paused call waits, or on resume the decided call's tool_result.
type approvalState struct {
	reason  string        // why the round's paused call waits; "" when it is interactive
	answer  *coachd.Block // the resolved approval's tool_result, once decided
	cleared bool          // the pending record is cleared already (an approved call ran)
}

// pendingAnswer is the tool_result that resolves the session's pending
// call: the user's answer or a dismissal, or for an approval what decide
// made of it (a stand-in until then, for the reservation's estimate).
func (t *Turn) pendingAnswer(p *coachd.PendingInteraction) coachd.Block {
	a := t.req.Answer
	switch {
	case t.ap.answer != nil:
		return *t.ap.answer
	case p.Kind == coachd.PendingApproval:
		return coachd.ToolResultBlock(p.ToolUseID, "awaiting the approved call's result", false)
	case a != nil:
		return coachd.ToolResultBlock(p.ToolUseID, answerText(a.Content), a.IsError)
	}
	return coachd.ToolResultBlock(p.ToolUseID, "dismissed: the user sent a message instead of answering", false)
}

// decide resolves a call that waited for approval: approved, it runs now;
// denied (or a message sent instead of an answer), it is refused. The
// result is streamed as the call's tool_result.
func (t *Turn) decide(ctx context.Context, p *coachd.PendingInteraction) error {
	var ans approvalAnswer
	if a := t.req.Answer; a != nil && a.IsError {
		// The client could not ask: denied, with what it said.
		ans.Reason = runeCut("the app could not ask them: "+answerText(a.Content), MaxApprovalReason)
	} else if a != nil {
		ans, _ = parseApproval(a.Content) // validated by Prepare
	} else {
		ans.Reason = "they sent a message instead of answering"
	}
	// The input goes along: the call was made in an earlier stream.
	ev := coachd.Event{Type: coachd.EventToolResult, ToolUseID: p.ToolUseID, ToolName: p.Name, Input: p.Input}
	var b coachd.Block
	if !ans.Approved {
		text := DeniedText + "; it did not run."
		if ans.Reason != "" {
			text = DeniedText + ": " + ans.Reason
		}
		b = coachd.ToolResultBlock(p.ToolUseID, text, true)
		ev.Result, ev.IsError, ev.Denied, ev.Reason = text, true, true, ans.Reason
	} else {
		// At most once: the record is cleared before the call runs, so a
		// crash while it runs leaves it interrupted, never run twice.
		wctx, done := persistCtx(ctx)
		_, err := t.r.cfg.Store.UpdateSession(wctx, t.req.User.ID, t.sess.ID, coachd.SessionUpdate{SetPending: true})
		done()
		if err != nil {
			return err
		}
		t.ap.cleared = true
		call := coachd.ToolCall{ID: p.ToolUseID, Name: p.Name, Input: p.Input}
		t.res.ToolCalls = append(t.res.ToolCalls, call)
		out := t.runApproved(ctx, call)
		if !out.failed {
			t.x.called[p.Name] = true // for the contracts, as any call that ran
		}
		b = out.block
		ev.Result, ev.IsError = b.ResultText(), b.IsError
	}
	t.ap.answer = &b
	t.emit(ev)
	return nil
}

// runApproved runs an approved call, checked again against the agent as
// it is now (the pack may have been reloaded while the call waited).
func (t *Turn) runApproved(ctx context.Context, c coachd.ToolCall) outcome {
	tool, ok := t.tool(c.Name)
	if !ok {
		return errOutcome(c.ID, fmt.Sprintf("unknown tool %q: this agent can call %v", c.Name, t.agent.Tools))
	}
	if t.forbidden(c.Name) {
		return errOutcome(c.ID, fmt.Sprintf("refused: this agent's contract forbids calling %s; continue without it", c.Name))
	}
	if err := t.tools.ValidateInput(c.Name, c.Input); err != nil {
		return errOutcome(c.ID, InvalidInputText(c.Name, err))
	}
	return t.runTool(ctx, t.agent.Limits.withDefaults().ToolTimeout, tool, c)
}

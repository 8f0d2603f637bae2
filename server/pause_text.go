package server

import (
	"encoding/json"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
)

// Clients that only send and show text (the OpenAI door, MCP's chat tool)
// see a pause as a question with numbered choices, and answer it with
// their next message.

// textAnswer is the answer a text message gives to the session's pending
// call, by number or by the option's text; nil when it gives none (the
// message is then a message, which dismisses it) or the call expired.
func textAnswer(p *coachd.PendingInteraction, text string, now time.Time) *agent.Answer {
	if p == nil || (!p.ExpiresAt.IsZero() && now.After(p.ExpiresAt)) {
		return nil
	}
	if p.Kind == coachd.PendingApproval {
		if content := approvalChoice(text); content != nil {
			return &agent.Answer{ToolUseID: p.ToolUseID, Content: content}
		}
		return nil
	}
	if opt := chosenOption(p.Input, text); opt != "" {
		content, _ := json.Marshal(opt)
		return &agent.Answer{ToolUseID: p.ToolUseID, Content: content}
	}
	return nil
}

// interactionText renders the call a turn paused on as text.
func interactionText(ia *interaction) string {
	if ia.Approval {
		return approvalText(coachd.Event{ToolName: ia.Name, Input: ia.Input, Reason: ia.Reason})
	}
	return optionsText(ia.Input)
}

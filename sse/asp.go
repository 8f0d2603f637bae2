package sse

import (
	"encoding/json"

	"github.com/coachd/coachd"
)

// The asp dialect (ASP v2): unnamed data lines, each an object with a type.
//
//	turn_started      → {"type":"ack","session_id","message_id"}
//	text_delta        → {"type":"text","text"}
//	thinking_delta    → {"type":"thinking","text"}
//	tool_call_ready   → {"type":"tool","tool_use_id","name","input"}
//	tool_result       → {"type":"tool_result","tool_use_id","content"[,"is_error"]}
//	                    (content is the result's JSON when it is JSON, a string otherwise)
//	turn_ended        → {"type":"message_stop","stop_reason"}, after an error
//	                    {"type":"error","code":stop_reason,"message"} when the
//	                    loop stopped abnormally (max_rounds: "Tool loop exceeded
//	                    MAX_STEPS", as the seed's own loop says) and no error
//	                    was sent yet
//	error             → {"type":"error","code","message"[,"retryable"]}
//	approval_required → {"type":"approval_required","tool_use_id","name","input","reason"}
//	                    (the call's tool event came before it; message_stop says
//	                    awaiting_input; a denied call's tool_result has denied)
//
// Dropped: tool_call_started (an ASP tool event carries the full input, so
// it is sent when the input is complete), round_boundary, interaction_
// requested (the tool event already carried the input, and message_stop
// says awaiting_input), session_changed, usage.
//
// The ASP v2 types have no session_id/message_id on ack, no is_error on
// tool_result and no code or retryable on error; these are added fields,
// which ASP clients ignore, so that a client can still tell a retryable
// error from a final one.

type aspAck struct {
	Type      string `json:"type"`
	SessionID string `json:"session_id"`
	MessageID string `json:"message_id"`
}

type aspText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type aspTool struct {
	Type      string          `json:"type"`
	ToolUseID string          `json:"tool_use_id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
}

type aspToolResult struct {
	Type      string          `json:"type"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"` // the result itself when it is JSON, else a JSON string
	IsError   bool            `json:"is_error,omitempty"`
	Denied    bool            `json:"denied,omitempty"`
}

type aspStop struct {
	Type       string `json:"type"`
	StopReason string `json:"stop_reason"`
}

type aspError struct {
	Type      string `json:"type"`
	Code      string `json:"code"`
	Message   string `json:"message"`
	Retryable bool   `json:"retryable,omitempty"`
}

func encodeASP(dst []byte, ev coachd.Event) []byte {
	switch ev.Type {
	case coachd.EventTurnStarted:
		return frame(dst, "", aspAck{"ack", ev.SessionID, ev.MessageID})
	case coachd.EventTextDelta:
		return frame(dst, "", aspText{"text", ev.Text})
	case coachd.EventThinkingDelta:
		return frame(dst, "", aspText{"thinking", ev.Text})
	case coachd.EventToolCallReady:
		return frame(dst, "", aspTool{"tool", ev.ToolUseID, ev.ToolName, rawOr(ev.Input, "{}")})
	case coachd.EventToolResult:
		if ev.Cut {
			return dst // its call was never announced ("tool" is a ready call)
		}
		return frame(dst, "", aspToolResult{"tool_result", ev.ToolUseID, coachd.JSONOrString(ev.Result), ev.IsError, ev.Denied})
	case coachd.EventApprovalRequired:
		return frame(dst, "", withType{"approval_required", approvalOf(ev)})
	case coachd.EventTurnEnded:
		return frame(dst, "", aspStop{"message_stop", ev.StopReason})
	case coachd.EventError:
		e := errorOf(ev)
		return frame(dst, "", aspError{"error", e.Code, e.Message, e.Retryable})
	}
	return dst
}

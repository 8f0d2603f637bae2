package sse

import (
	"encoding/json"
	"strconv"

	"github.com/coachd/coachd"
)

// The ai-sdk dialect: the Vercel AI SDK's UI message stream (what useChat
// reads), unnamed data lines of JSON chunks, then data: [DONE], with the
// header x-vercel-ai-ui-message-stream: v1.
//
//	turn_started          → start {messageId}, start-step
//	text_delta            → text-start (once per text part), text-delta {id, delta}
//	thinking_delta        → reasoning-start (once), reasoning-delta {id, delta}
//	tool_call_started     → tool-input-start {toolCallId, toolName}
//	tool_call_ready       → tool-input-available {toolCallId, toolName, input}
//	tool_result           → tool-output-available {toolCallId, output} | tool-output-error {toolCallId, errorText},
//	                        with providerExecuted: true (coachd ran the call)
//	round_boundary        → finish-step, start-step
//	interaction_requested → (nothing: the tool part waits for its output, addToolResult answers it)
//	approval_required     → tool-approval-request {approvalId, toolCallId, reason} (addToolApprovalResponse answers it)
//	tool_result (denied)  → tool-output-denied {toolCallId}
//	                        (a call this stream did not announce, answered after a
//	                        pause, gets its tool-input-available first, unless the
//	                        turn continues the client's message: turn_started's Continues)
//	session_changed       → data-coachd-session {change, mode}
//	events_missed         → data-coachd-events-missed {last_event_id, message}, transient
//	                        (useChat's onData gets it; it is kept in no message)
//	error                 → error {errorText}
//	turn_ended            → finish-step, finish {finishReason}
//
// The AI SDK validates every chunk it reads (AI SDK 6 against strict
// schemas): one value it does not know fails the whole turn. So a finish
// reason is one AI SDK 5 and 6 both take (an aborted turn's is "other":
// "interrupted" is 7's alone), and an errorText is never empty.
//
// Unlike the other dialects it has state: text and reasoning parts are
// opened and closed around the deltas, so it is encoded by the Writer.
const AISDK = "ai-sdk"

// aiState is the open parts of an ai-sdk stream.
type aiState struct {
	text, reasoning string          // ids of the open parts, "" when none
	n               int             // parts opened so far
	calls           map[string]bool // tool calls this stream has announced
	// cont is the id of the client's assistant message the turn goes
	// on with (turn_started's Continues), "" when it starts a new one:
	// start carries it, for useChat continues the message of start's id
	// and adds any other as a new message beside it; and the calls it
	// holds are not announced again, which would give it each call twice.
	cont string
}

type aiChunk struct {
	Type       string          `json:"type"`
	ID         string          `json:"id,omitempty"`
	Delta      string          `json:"delta,omitempty"`
	MessageID  string          `json:"messageId,omitempty"`
	ApprovalID string          `json:"approvalId,omitempty"`
	ToolCallID string          `json:"toolCallId,omitempty"`
	ToolName   string          `json:"toolName,omitempty"`
	Input      json.RawMessage `json:"input,omitempty"`
	Output     any             `json:"output,omitempty"`
	// Executed marks the end of a call coachd ran (or cut): useChat's
	// lastAssistantMessageIsCompleteWithToolCalls, with which apps send
	// their paused tools' answers by themselves, skips such parts, so a
	// turn that ended on a round coachd ran is not sent back as an answer.
	Executed  bool   `json:"providerExecuted,omitempty"`
	ErrorText string `json:"errorText,omitempty"`
	Reason    string `json:"finishReason,omitempty"`
	Why       string `json:"reason,omitempty"` // tool-approval-request
	Data      any    `json:"data,omitempty"`
	Transient bool   `json:"transient,omitempty"` // data-* parts
}

// aiFinish maps a stop reason to a finish reason every AI SDK from 5 on
// takes: stop, length, content-filter, tool-calls, error, other.
func aiFinish(stop string) string {
	switch stop {
	case coachd.TurnEndTurn:
		return "stop"
	case coachd.TurnMaxTokens:
		return "length"
	case coachd.TurnRefusal:
		return "content-filter"
	case coachd.TurnAwaitingInput:
		return "tool-calls"
	case coachd.TurnError:
		return "error"
	}
	return "other"
}

// errorText is msg, or a stand-in: the chunk requires a non-empty one.
func errorText(msg string) string {
	if msg == "" {
		return "error"
	}
	return msg
}

func (st *aiState) announce(id string) {
	if st.calls == nil {
		st.calls = map[string]bool{}
	}
	st.calls[id] = true
}

func (st *aiState) close(dst []byte) []byte {
	if st.text != "" {
		dst = frame(dst, "", aiChunk{Type: "text-end", ID: st.text})
		st.text = ""
	}
	if st.reasoning != "" {
		dst = frame(dst, "", aiChunk{Type: "reasoning-end", ID: st.reasoning})
		st.reasoning = ""
	}
	return dst
}

func (st *aiState) open(dst []byte, kind string, id *string) []byte {
	if *id != "" {
		return dst
	}
	dst = st.close(dst)
	st.n++
	*id = kind[:1] + strconv.Itoa(st.n)
	return frame(dst, "", aiChunk{Type: kind + "-start", ID: *id})
}

func (st *aiState) encode(dst []byte, ev coachd.Event) []byte {
	switch ev.Type {
	case coachd.EventTurnStarted:
		id := ev.MessageID
		if st.cont = ev.Continues; st.cont != "" {
			id = st.cont
		}
		dst = frame(dst, "", aiChunk{Type: "start", MessageID: id})
		return frame(dst, "", aiChunk{Type: "start-step"})
	case coachd.EventTextDelta:
		dst = st.open(dst, "text", &st.text)
		return frame(dst, "", aiChunk{Type: "text-delta", ID: st.text, Delta: ev.Text})
	case coachd.EventThinkingDelta:
		dst = st.open(dst, "reasoning", &st.reasoning)
		return frame(dst, "", aiChunk{Type: "reasoning-delta", ID: st.reasoning, Delta: ev.Text})
	case coachd.EventToolCallStarted:
		dst = st.close(dst)
		st.announce(ev.ToolUseID)
		return frame(dst, "", aiChunk{Type: "tool-input-start", ToolCallID: ev.ToolUseID, ToolName: ev.ToolName})
	case coachd.EventToolCallReady:
		st.announce(ev.ToolUseID)
		return frame(dst, "", aiChunk{Type: "tool-input-available", ToolCallID: ev.ToolUseID, ToolName: ev.ToolName, Input: rawOr(ev.Input, "{}")})
	case coachd.EventApprovalRequired:
		// The approval's id is the call's: the answer names the call.
		return frame(dst, "", aiChunk{Type: "tool-approval-request", ApprovalID: ev.ToolUseID, ToolCallID: ev.ToolUseID, Why: ev.Reason})
	case coachd.EventToolResult:
		if ev.Cut {
			// Its input never became available: the part ends in error.
			return frame(dst, "", aiChunk{Type: "tool-input-error", ToolCallID: ev.ToolUseID, ToolName: ev.ToolName, Input: rawOr(ev.Input, "{}"), ErrorText: ev.Result, Executed: true})
		}
		if !st.calls[ev.ToolUseID] && ev.Input != nil && st.cont == "" {
			// A call made in an earlier stream (answered after a pause):
			// announced first, so that a reader of this stream alone has
			// the part its output goes to.
			st.announce(ev.ToolUseID)
			dst = frame(dst, "", aiChunk{Type: "tool-input-available", ToolCallID: ev.ToolUseID, ToolName: ev.ToolName, Input: rawOr(ev.Input, "{}")})
		}
		if ev.Denied {
			return frame(dst, "", aiChunk{Type: "tool-output-denied", ToolCallID: ev.ToolUseID})
		}
		if ev.IsError {
			return frame(dst, "", aiChunk{Type: "tool-output-error", ToolCallID: ev.ToolUseID, ErrorText: errorText(ev.Result), Executed: true})
		}
		var out any = ev.Result
		if coachd.ValidJSON([]byte(ev.Result)) {
			out = json.RawMessage(ev.Result)
		}
		return frame(dst, "", aiChunk{Type: "tool-output-available", ToolCallID: ev.ToolUseID, Output: out, Executed: true})
	case coachd.EventRoundBoundary:
		dst = st.close(dst)
		dst = frame(dst, "", aiChunk{Type: "finish-step"})
		return frame(dst, "", aiChunk{Type: "start-step"})
	case coachd.EventSessionChanged:
		return frame(dst, "", aiChunk{Type: "data-coachd-session", Data: map[string]string{"change": ev.Change, "mode": ev.Mode}})
	case coachd.EventEventsMissed:
		return frame(dst, "", aiChunk{Type: "data-coachd-events-missed", Data: rawOr(ev.Data, "{}"), Transient: true})
	case coachd.EventError:
		dst = st.close(dst)
		msg := ""
		if ev.Err != nil {
			msg = ev.Err.Message
		}
		return frame(dst, "", aiChunk{Type: "error", ErrorText: errorText(msg)})
	case coachd.EventTurnEnded:
		dst = st.close(dst)
		dst = frame(dst, "", aiChunk{Type: "finish-step"})
		return frame(dst, "", aiChunk{Type: "finish", Reason: aiFinish(ev.StopReason)})
	}
	return dst
}

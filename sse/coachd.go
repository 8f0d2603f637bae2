package sse

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/coachd/coachd"
)

// The coachd dialect: named events, one JSON object each.
//
//	turn_started          → message_start   {session_id, message_id}
//	text_delta            → content_delta   {text}
//	thinking_delta        → thinking_delta  {text}
//	tool_call_started     → function_call   {id, name}
//	tool_call_ready       → (dropped)
//	tool_result           → function_result {tool_use_id, name, result[, is_error]}
//	                        (a failed tool's result is {"error":true,"code":"execution_error","message"} as a string)
//	round_boundary        → round_boundary  {}
//	interaction_requested → interaction     {tool_use_id, name, input, expires_at}
//	approval_required     → approval_required {tool_use_id, name, input, reason, expires_at}
//	                        (expires_at: when the paused call stops taking an answer)
//	                        (answered {"approved": bool, "reason"}; a denied call's
//	                        function_result has is_error and denied)
//	session_changed       → session_changed {change[, mode]}
//	usage                 → usage           {input_tokens, output_tokens, ..., tokens_used[, budget_remaining]}
//	turn_ended            → message_end     {session_id, tokens_used, latency_ms, stop_reason}
//	error                 → error           {type, message, retryable[, retry_after][, details], extras...}
//	                        (the stream ends at an error: no message_end follows it)
//	review                → review          the stored review (POST /v1/reviews), after message_end
//	events_missed         → events_missed   {last_event_id, message}, first on a session stream resumed
//	                        past what the event log kept (the other dialects drop it)
//
// function_call is {id, name} as the original spec has it, sent once per
// call as soon as the model starts it, so clients can show progress early;
// tool_call_ready adds only the arguments, which that spec never put on the
// wire (an interactive tool's input arrives in interaction), so it is
// dropped.

type coachdText struct {
	Text string `json:"text"`
}

type coachdCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

type coachdResult struct {
	ToolUseID string `json:"tool_use_id"`
	Name      string `json:"name"`
	Result    string `json:"result"`
	IsError   bool   `json:"is_error,omitempty"`
	Denied    bool   `json:"denied,omitempty"`
}

// toolError is a failed tool's function_result.result, as seed 004 has it.
type toolError struct {
	Error   bool   `json:"error"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

type coachdInteraction struct {
	ToolUseID string          `json:"tool_use_id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ExpiresAt time.Time       `json:"expires_at,omitzero"`
}

// coachdApproval is approval_required: the other dialects' approval and
// the expiry.
type coachdApproval struct {
	approval
	ExpiresAt time.Time `json:"expires_at,omitzero"`
}

type coachdSessionChanged struct {
	Change string `json:"change"`
	Mode   string `json:"mode,omitempty"`
}

type coachdUsage struct {
	InputTokens              int64  `json:"input_tokens"`
	OutputTokens             int64  `json:"output_tokens"`
	CacheReadInputTokens     int64  `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64  `json:"cache_creation_input_tokens"`
	TokensUsed               int64  `json:"tokens_used"`
	BudgetRemaining          *int64 `json:"budget_remaining,omitempty"`
	// The usage in the budget's unit and in dollars (coachd.TurnUsage).
	Billed     int64   `json:"billed,omitempty"`
	BudgetUnit string  `json:"budget_unit,omitempty"`
	CostUSD    float64 `json:"cost_usd,omitempty"`
}

type coachdError struct {
	Type       string              `json:"type"`
	Message    string              `json:"message"`
	Retryable  bool                `json:"retryable"`
	RetryAfter int64               `json:"retry_after,omitempty"` // seconds
	Details    []coachd.FieldError `json:"details,omitempty"`
}

func encodeCoachd(dst []byte, ev coachd.Event) []byte {
	switch ev.Type {
	case coachd.EventTurnStarted:
		// This and the other frames every turn sends are written without
		// reflection too (TestCoachdFramesByHand, FuzzCoachdFrames).
		dst = appendField(append(dst, "event: message_start\ndata: {"...), `"session_id":`, ev.SessionID)
		return append(appendField(dst, `,"message_id":`, ev.MessageID), "}\n\n"...)
	case coachd.EventTextDelta:
		// The most frequent frame, encoded without reflection.
		dst = append(dst, "event: content_delta\ndata: {\"text\":"...)
		dst = coachd.AppendJSONString(dst, ev.Text, false)
		return append(dst, "}\n\n"...)
	case coachd.EventThinkingDelta:
		return frame(dst, "thinking_delta", coachdText{ev.Text})
	case coachd.EventToolCallStarted:
		dst = appendField(append(dst, "event: function_call\ndata: {"...), `"id":`, ev.ToolUseID)
		return append(appendField(dst, `,"name":`, ev.ToolName), "}\n\n"...)
	case coachd.EventToolResult:
		if ev.IsError {
			// The seed's error result: a JSON object the client can parse.
			b, _ := json.Marshal(toolError{true, "execution_error", ev.Result})
			return frame(dst, "function_result", coachdResult{ev.ToolUseID, ev.ToolName, string(b), ev.IsError, ev.Denied})
		}
		dst = appendField(append(dst, "event: function_result\ndata: {"...), `"tool_use_id":`, ev.ToolUseID)
		dst = appendField(appendField(dst, `,"name":`, ev.ToolName), `,"result":`, ev.Result)
		if ev.Denied {
			dst = append(dst, `,"denied":true`...)
		}
		return append(dst, "}\n\n"...)
	case coachd.EventRoundBoundary:
		return append(dst, "event: round_boundary\ndata: {}\n\n"...)
	case coachd.EventInteractionRequested:
		return frame(dst, "interaction", coachdInteraction{ev.ToolUseID, ev.ToolName, rawOr(ev.Input, "{}"), ev.ExpiresAt})
	case coachd.EventApprovalRequired:
		return frame(dst, "approval_required", coachdApproval{approvalOf(ev), ev.ExpiresAt})
	case coachd.EventSessionChanged:
		return frame(dst, "session_changed", coachdSessionChanged{ev.Change, ev.Mode})
	case coachd.EventUsage:
		if out, ok := appendUsage(append(dst, "event: usage\ndata: "...), usageOf(ev.Usage)); ok {
			return append(out, "\n\n"...)
		}
		return frame(dst, "usage", usageOf(ev.Usage))
	case coachd.EventReview:
		return frame(dst, "review", rawOr(ev.Data, "{}"))
	case coachd.EventEventsMissed:
		return frame(dst, "events_missed", rawOr(ev.Data, "{}"))
	case coachd.EventTurnEnded:
		dst = appendField(append(dst, "event: message_end\ndata: {"...), `"session_id":`, ev.SessionID)
		dst = strconv.AppendInt(append(dst, `,"tokens_used":`...), tokensUsed(ev.Usage), 10)
		dst = strconv.AppendInt(append(dst, `,"latency_ms":`...), ev.LatencyMS, 10)
		return append(appendField(dst, `,"stop_reason":`, ev.StopReason), "}\n\n"...)
	case coachd.EventError:
		e := errorOf(ev)
		body := coachdError{
			Type:       e.Code,
			Message:    e.Message,
			Retryable:  e.Retryable,
			RetryAfter: e.RetryAfterSeconds(),
			Details:    e.Details,
		}
		extra := extraFields(e, "type", "message", "retryable", "retry_after", "details")
		return frame(dst, "error", withFields{body, extra})
	}
	return dst
}

// appendField appends key and s as a JSON string, as frame's encoder
// writes it (no HTML escaping).
func appendField(dst []byte, key, s string) []byte {
	return coachd.AppendJSONString(append(dst, key...), s, false)
}

// appendUsage appends u as frame's encoder writes it; it reports false,
// appending nothing, for a cost that is not a number JSON can carry.
func appendUsage(dst []byte, u coachdUsage) ([]byte, bool) {
	start := len(dst)
	dst = strconv.AppendInt(append(dst, `{"input_tokens":`...), u.InputTokens, 10)
	dst = strconv.AppendInt(append(dst, `,"output_tokens":`...), u.OutputTokens, 10)
	dst = strconv.AppendInt(append(dst, `,"cache_read_input_tokens":`...), u.CacheReadInputTokens, 10)
	dst = strconv.AppendInt(append(dst, `,"cache_creation_input_tokens":`...), u.CacheCreationInputTokens, 10)
	dst = strconv.AppendInt(append(dst, `,"tokens_used":`...), u.TokensUsed, 10)
	if u.BudgetRemaining != nil {
		dst = strconv.AppendInt(append(dst, `,"budget_remaining":`...), *u.BudgetRemaining, 10)
	}
	if u.Billed != 0 {
		dst = strconv.AppendInt(append(dst, `,"billed":`...), u.Billed, 10)
	}
	if u.BudgetUnit != "" {
		dst = appendField(dst, `,"budget_unit":`, u.BudgetUnit)
	}
	if u.CostUSD != 0 {
		var ok bool
		if dst, ok = coachd.AppendJSONFloat(append(dst, `,"cost_usd":`...), u.CostUSD); !ok {
			return dst[:start], false
		}
	}
	return append(dst, '}'), true
}

func usageOf(u *coachd.TurnUsage) coachdUsage {
	if u == nil {
		return coachdUsage{}
	}
	return coachdUsage{
		InputTokens:              u.InputTokens,
		OutputTokens:             u.OutputTokens,
		CacheReadInputTokens:     u.CacheReadInputTokens,
		CacheCreationInputTokens: u.CacheCreationInputTokens,
		TokensUsed:               tokensUsed(u),
		BudgetRemaining:          u.BudgetRemaining,
		Billed:                   u.Billed,
		BudgetUnit:               string(u.Unit),
		CostUSD:                  u.CostUSD,
	}
}

// tokensUsed is the turn's charged total: TokensUsed when the runner set
// it, the sum of the usage otherwise.
func tokensUsed(u *coachd.TurnUsage) int64 {
	if u == nil {
		return 0
	}
	if u.TokensUsed != 0 {
		return u.TokensUsed
	}
	return u.Total()
}

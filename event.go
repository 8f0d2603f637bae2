package coachd

import (
	"encoding/json"
	"time"
)

// EventType names a dialect-neutral stream event.
type EventType string

const (
	EventTurnStarted          EventType = "turn_started"
	EventTextDelta            EventType = "text_delta"
	EventThinkingDelta        EventType = "thinking_delta"
	EventToolCallStarted      EventType = "tool_call_started"
	EventToolCallReady        EventType = "tool_call_ready"
	EventToolResult           EventType = "tool_result"
	EventRoundBoundary        EventType = "round_boundary"
	EventInteractionRequested EventType = "interaction_requested"
	EventSessionChanged       EventType = "session_changed"
	EventUsage                EventType = "usage"
	EventTurnEnded            EventType = "turn_ended"
	EventError                EventType = "error"
	// EventReview ends a streamed review (POST /v1/reviews): Data is the
	// stored review, decision included.
	EventReview EventType = "review"
	// EventApprovalRequired: the turn pauses until the user approves or
	// denies the call (ToolUseID, ToolName, Input, Reason).
	EventApprovalRequired EventType = "approval_required"
	// EventEventsMissed opens a session stream resumed from an id whose
	// following events the log may no longer have (pruned by age, or
	// beyond the turns kept): Data says which id; the stream goes on with
	// what the log has left, and the client reloads the session's messages
	// to fill the gap.
	EventEventsMissed EventType = "events_missed"
)

// Turn stop reasons: why a turn ended.
const (
	TurnEndTurn           = "end_turn"
	TurnMaxTokens         = "max_tokens"
	TurnMaxRounds         = "max_rounds"
	TurnDeadline          = "deadline"
	TurnToolLimit         = "tool_limit"
	TurnCircuitOpen       = "circuit_open"
	TurnAwaitingInput     = "awaiting_input"
	TurnAborted           = "aborted"
	TurnRefusal           = "refusal"
	TurnError             = "error"
	TurnContractViolation = "contract_violation"
	// TurnSessionFull: the session's message cap (MaxMessagesPerSession)
	// left room for one last reply, which the model wrote without its
	// tools; the session takes no further turn.
	TurnSessionFull = "session_full"
)

// Session change kinds.
const (
	ChangeCompleted    = "completed"
	ChangeModeEntered  = "mode_entered"
	ChangeArcCompleted = "arc_completed"
)

// Event is one thing that happened in a turn, in the order it happened. The
// fields used depend on Type; sse/ encodes events into wire dialects.
type Event struct {
	Seq  int64     `json:"seq"`
	Type EventType `json:"type"`
	// Turn numbers the session's turns (the event log); 0 for events of
	// no logged turn.
	Turn int64 `json:"turn,omitempty"`

	SessionID string `json:"session_id,omitempty"` // turn_started, turn_ended
	MessageID string `json:"message_id,omitempty"` // turn_started
	// Continues (turn_started) is the id of the client's message the turn
	// goes on with, its paused tool answered (useChat's assistant
	// message): the ai-sdk dialect starts the stream, a replay too, in it.
	Continues string `json:"continues,omitempty"`

	Text string `json:"text,omitempty"` // text_delta, thinking_delta

	ToolUseID string          `json:"tool_use_id,omitempty"` // tool_*, interaction_requested
	ToolName  string          `json:"tool_name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`  // tool_call_ready, interaction_requested
	Result    string          `json:"result,omitempty"` // tool_result
	IsError   bool            `json:"is_error,omitempty"`
	// Reason: approval_required, why the call needs approval; tool_result
	// of a denied call, the user's reason.
	Reason string `json:"reason,omitempty"`
	Denied bool   `json:"denied,omitempty"` // tool_result: the user denied the call, it did not run
	// ExpiresAt: interaction_requested and approval_required, when the
	// paused call stops taking an answer (its pending record's).
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	// Cut: tool_result of a call the reply ended in (max_tokens, a
	// refusal) before it was ready; it did not run, and dialects that
	// announce a call only once it is ready (tool_call_ready) skip it.
	// turn_ended (aborted): the server's drain stopped the turn, not a
	// user (stream.Live), for a reader after the restart to tell.
	Cut bool `json:"cut,omitempty"`

	Change string `json:"change,omitempty"` // session_changed: completed, mode_entered, arc_completed
	Mode   string `json:"mode,omitempty"`   // session_changed

	Usage *TurnUsage `json:"usage,omitempty"` // usage, turn_ended

	StopReason string `json:"stop_reason,omitempty"` // turn_ended
	LatencyMS  int64  `json:"latency_ms,omitempty"`  // turn_ended

	Err *Error `json:"-"` // error

	Data json.RawMessage `json:"data,omitempty"` // review, events_missed
}

// ID is the event's id in its session's log.
func (ev Event) ID() EventID { return EventID{ev.Turn, ev.Seq} }

// Terminal reports whether ev ends its turn's stream.
func (ev Event) Terminal() bool { return ev.Type == EventTurnEnded }

// TurnUsage is the token count of a turn so far.
type TurnUsage struct {
	Usage
	TokensUsed      int64  `json:"tokens_used"` // raw: every token once
	BudgetRemaining *int64 `json:"budget_remaining,omitempty"`
	// Billed is the usage in the budget's Unit (what the budget is charged,
	// and what BudgetRemaining counts); CostUSD is it in dollars at the
	// model's list prices (pricing.go).
	Billed  int64      `json:"billed,omitempty"`
	Unit    BudgetUnit `json:"budget_unit,omitempty"`
	CostUSD float64    `json:"cost_usd,omitempty"`
}

// EventSink receives a turn's events. Send returns an error when the
// receiver is gone (client disconnected).
type EventSink interface {
	Send(Event) error
}

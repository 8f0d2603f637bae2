package coachd

import (
	"context"
	"encoding/json"
)

// ModelRequest is one call to a model: a Messages API request in coachd's
// own types.
type ModelRequest struct {
	Model          string
	System         []Block // text blocks
	Messages       []ModelMessage
	Tools          []ToolSpec
	ToolChoice     *ToolChoice
	MaxTokens      int64
	ThinkingBudget int64 // 0: thinking off
	Temperature    *float64
	StopSequences  []string
	UserID         string // sent as metadata.user_id
	// NoCache turns prompt-caching breakpoints off for this request.
	NoCache bool
	// NoHistoryCache keeps the breakpoints off the messages (CacheMarks
	// marks tools and system only): for a one-off request, such as the
	// compaction's summary call, whose history no later request sends,
	// an entry for it would be written (1.25x) and never read.
	NoHistoryCache bool
	// TailBlocks says the last message's final TailBlocks blocks are the
	// turn's context (time, recent files, a due check-in), not history:
	// they change every turn, so the cache breakpoint goes before them
	// (CacheMarks).
	TailBlocks int
}

// ModelMessage is one message of a model request.
type ModelMessage struct {
	Role   Role    `json:"role"`
	Blocks []Block `json:"content"`
}

// ToolSpec is what the model is told about a tool.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// ToolChoice constrains which tool the model calls.
type ToolChoice struct {
	Type                   string `json:"type"` // auto, any, tool, none
	Name                   string `json:"name,omitempty"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use,omitempty"`
}

// Model event types.
const (
	ModelTextDelta      = "text_delta"
	ModelThinkingDelta  = "thinking_delta"
	ModelSignatureDelta = "signature_delta"
	ModelToolUseStart   = "tool_use_start"
	ModelInputJSONDelta = "input_json_delta"
	ModelBlockStop      = "block_stop"
	ModelMessageDelta   = "message_delta"
)

// ModelEvent is one streamed event from the model.
type ModelEvent struct {
	Type       string
	Index      int    // content block index
	Text       string // text, thinking, signature or partial JSON
	ID, Name   string // tool_use_start
	StopReason string // message_delta
	Usage      Usage  // message_delta: usage so far
}

// ModelResponse is the assembled message at the end of a stream.
type ModelResponse struct {
	ID         string  `json:"id"`
	Model      string  `json:"model"`
	Blocks     []Block `json:"content"`
	StopReason string  `json:"stop_reason"`
	// Usage is what the response is charged: the upstream's counts, and
	// for a stream cut before its final count, the output it streamed
	// priced with TokensOfBytes.
	Usage Usage `json:"usage"`
}

// Stop reasons the model reports.
const (
	StopEndTurn      = "end_turn"
	StopMaxTokens    = "max_tokens"
	StopToolUse      = "tool_use"
	StopStopSequence = "stop_sequence"
	StopPauseTurn    = "pause_turn"
	StopRefusal      = "refusal"
)

// Model is a streaming LLM: the Anthropic adapter, the offline demo model.
type Model interface {
	Stream(ctx context.Context, req *ModelRequest) ModelStream
}

// TokenCounter is a Model that counts a request's input tokens exactly
// (the Messages API's count_tokens endpoint). Budgets use it, when
// configured, to estimate a turn before reserving.
type TokenCounter interface {
	CountTokens(ctx context.Context, req *ModelRequest) (int64, error)
}

// ModelStream is an iterator over a model's events, shaped like the SDK's:
//
//	for s.Next() { ev := s.Event() ... }
//	if err := s.Err(); err != nil { ... }
//	resp := s.Response()
//
// Response returns the message assembled so far (complete after Next
// returns false without error; partial, with the usage seen, after an
// error). Close releases the connection; it is safe to call twice. A
// stream belongs to the goroutine reading it: Close is not called while
// Next runs (the Anthropic adapter hands its buffers to the next stream
// at Close).
type ModelStream interface {
	Next() bool
	Event() ModelEvent
	Err() error
	Response() *ModelResponse
	Close() error
}

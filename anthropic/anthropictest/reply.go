package anthropictest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/coachd/coachd"
)

// Reply is what the fake answers to one POST /v1/messages. Build one with
// Text, Blocks, Status, ReplayFile or a cassette Interaction, then add
// faults and pacing with its With* methods. Exactly one source is used, in
// this order: Status, Events, Message, Blocks.
type Reply struct {
	// Status, Header, Body: a non-200 response (Status builder). Body
	// defaults to the API's error body for the status.
	Status int
	Header http.Header
	Body   []byte

	// Events is a stream served verbatim (ReplayFile, streamed cassettes).
	Events []Event
	// Message is a recorded non-streaming message body, served verbatim,
	// or as a stream when the request asks for one.
	Message json.RawMessage

	// Blocks is a scripted message. ID defaults to msg_fake_<n>, Model to
	// the request's model, StopReason to tool_use when a ToolUse block is
	// present and end_turn otherwise, Usage to the fake's accounting.
	ID, Model    string
	Blocks       []BlockSpec
	StopReason   string
	StopSequence string
	Usage        *coachd.Usage

	// Fault, applied to streaming replies.
	Fault Fault
	// Pad adds whitespace before the closing brace of data lines, as the
	// real server does.
	Pad bool
	// FirstEventDelay is waited before the first event, EventDelay before
	// each later one. Both end early when the client goes away.
	FirstEventDelay, EventDelay time.Duration
	// Gzip compresses the body when the client accepts gzip.
	Gzip bool

	err error // a builder failed: served as a 500 naming the error
}

// FaultKind says how a stream goes wrong.
type FaultKind int

// Faults.
const (
	NoFault    FaultKind = iota
	FaultError           // an `event: error` after After events, then the end
	FaultDrop            // the connection is cut after After events
	FaultStall           // no more events after After events, until the client goes away
)

// Fault is a failure injected into a streaming reply.
type Fault struct {
	Kind      FaultKind
	After     int    // events written before the fault
	ErrorType string // FaultError: error.type, default overloaded_error
	Message   string // FaultError: error.message, default Overloaded
}

// BlockSpec is one scripted content block.
type BlockSpec struct {
	Type      string // text, thinking, redacted_thinking, tool_use, or any other
	Text      string // text; thinking text for thinking blocks
	Signature string // thinking
	Data      string // redacted_thinking
	ID, Name  string // tool_use
	Input     string // tool_use: the input JSON
	// Chunk is the text or thinking delta size in runes (0: one delta).
	Chunk int
	// Splits are byte offsets into Input where partial_json deltas split.
	Splits []int
	// Raw is the content_block_start block of any other type, sent as is.
	Raw json.RawMessage
}

// TextBlock is a text block streamed in deltas of chunk runes (0: one).
func TextBlock(text string, chunk int) BlockSpec {
	return BlockSpec{Type: coachd.BlockText, Text: text, Chunk: chunk}
}

// ToolUse is a tool_use block whose input JSON streams as partial_json
// deltas split at the given byte offsets (none: one delta), after the
// empty first delta the real server sends.
func ToolUse(id, name, input string, splits ...int) BlockSpec {
	return BlockSpec{Type: coachd.BlockToolUse, ID: id, Name: name, Input: input, Splits: splits}
}

// Thinking is a thinking block streamed in deltas of 16 runes, then its
// signature in one signature_delta.
func Thinking(text, signature string) BlockSpec {
	return BlockSpec{Type: coachd.BlockThinking, Text: text, Signature: signature, Chunk: 16}
}

// Redacted is a redacted_thinking block: its data arrives whole at start.
func Redacted(data string) BlockSpec {
	return BlockSpec{Type: coachd.BlockRedactedThinking, Data: data}
}

// Text is a one-block text reply ending with end_turn.
func Text(text string, chunk int) Reply { return Reply{Blocks: []BlockSpec{TextBlock(text, chunk)}} }

// Blocks is a reply of the given blocks; the stop reason is inferred.
func Blocks(blocks ...BlockSpec) Reply { return Reply{Blocks: blocks} }

// Status is an HTTP error reply. An empty body becomes the API's error body
// for the status (rate_limit_error for 429, overloaded_error for 529, ...).
func Status(code int, header http.Header, body string) Reply {
	return Reply{Status: code, Header: header, Body: []byte(body)}
}

// WithStop sets the stop reason.
func (r Reply) WithStop(reason string) Reply { r.StopReason = reason; return r }

// WithUsage fixes the reported usage instead of the fake's accounting.
func (r Reply) WithUsage(u coachd.Usage) Reply { r.Usage = &u; return r }

// ErrorAfter ends the stream with `event: error` after n events.
// errType "" is overloaded_error.
func (r Reply) ErrorAfter(n int, errType, message string) Reply {
	r.Fault = Fault{Kind: FaultError, After: n, ErrorType: errType, Message: message}
	return r
}

// DropAfter cuts the connection after n events.
func (r Reply) DropAfter(n int) Reply { r.Fault = Fault{Kind: FaultDrop, After: n}; return r }

// StallAfter sends n events, then nothing until the client goes away.
func (r Reply) StallAfter(n int) Reply { r.Fault = Fault{Kind: FaultStall, After: n}; return r }

// Padded pads data lines with spaces like the real server.
func (r Reply) Padded() Reply { r.Pad = true; return r }

// Paced delays the first event by first and every later one by each.
func (r Reply) Paced(first, each time.Duration) Reply {
	r.FirstEventDelay, r.EventDelay = first, each
	return r
}

// Gzipped compresses the body when the client accepts gzip.
func (r Reply) Gzipped() Reply { r.Gzip = true; return r }

func (r Reply) stopReason() string {
	if r.StopReason != "" {
		return r.StopReason
	}
	for _, b := range r.Blocks {
		if b.Type == coachd.BlockToolUse {
			return coachd.StopToolUse
		}
	}
	return coachd.StopEndTurn
}

// outputText is what output tokens are counted from.
func (r Reply) outputText() int {
	n := 0
	for _, b := range r.Blocks {
		n += len(b.Text) + len(b.Input) + len(b.Data) + len(b.Raw)
	}
	return n
}

// startBlock is a block as content_block_start carries it.
func (b BlockSpec) startBlock() any {
	switch b.Type {
	case coachd.BlockText:
		return map[string]any{"type": "text", "text": ""}
	case coachd.BlockThinking:
		return map[string]any{"type": "thinking", "thinking": "", "signature": ""}
	case coachd.BlockRedactedThinking:
		return map[string]any{"type": "redacted_thinking", "data": b.Data}
	case coachd.BlockToolUse:
		return map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": map[string]any{}}
	}
	if len(b.Raw) > 0 {
		return b.Raw
	}
	return map[string]any{"type": b.Type}
}

// finalBlock is the block as a non-streaming message carries it.
func (b BlockSpec) finalBlock() any {
	switch b.Type {
	case coachd.BlockText:
		return map[string]any{"type": "text", "text": b.Text}
	case coachd.BlockThinking:
		return map[string]any{"type": "thinking", "thinking": b.Text, "signature": b.Signature}
	case coachd.BlockToolUse:
		input := json.RawMessage(b.Input)
		if strings.TrimSpace(b.Input) == "" || !json.Valid(input) {
			input = json.RawMessage(`{}`)
		}
		return map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": input}
	}
	return b.startBlock()
}

// deltas are the content_block_delta payloads of the block.
func (b BlockSpec) deltas() []delta {
	var out []delta
	switch b.Type {
	case coachd.BlockText:
		for _, c := range chunks(b.Text, b.Chunk) {
			out = append(out, delta{"text_delta", "text", c})
		}
	case coachd.BlockThinking:
		for _, c := range chunks(b.Text, b.Chunk) {
			out = append(out, delta{"thinking_delta", "thinking", c})
		}
		out = append(out, delta{"signature_delta", "signature", b.Signature})
	case coachd.BlockToolUse:
		out = append(out, delta{"input_json_delta", "partial_json", ""})
		prev := 0
		for _, at := range append(b.Splits, len(b.Input)) {
			if at <= prev || at > len(b.Input) {
				continue
			}
			out = append(out, delta{"input_json_delta", "partial_json", b.Input[prev:at]})
			prev = at
		}
	}
	return out
}

// delta is one content_block_delta's delta: {"<key>": value, "type": typ}.
type delta struct{ typ, key, value string }

// appendDeltaEvent appends the data of a content_block_delta event as
// json.Marshal writes it from a map (keys sorted: every key sorts before
// "type"; the value HTML-escaped), without building the map.
func appendDeltaEvent(dst []byte, index int, d delta) []byte {
	v, _ := json.Marshal(d.value) // a string always marshals
	dst = append(dst, `{"delta":{"`...)
	dst = append(dst, d.key...)
	dst = append(dst, `":`...)
	dst = append(dst, v...)
	dst = append(dst, `,"type":"`...)
	dst = append(dst, d.typ...)
	dst = append(dst, `"},"index":`...)
	dst = strconv.AppendInt(dst, int64(index), 10)
	return append(dst, `,"type":"content_block_delta"}`...)
}

// chunks splits s into pieces of n runes; n <= 0 is one piece.
func chunks(s string, n int) []string {
	if s == "" {
		return nil
	}
	if n <= 0 || utf8.RuneCountInString(s) <= n {
		return []string{s}
	}
	var out []string
	for s != "" {
		i, count := 0, 0
		for i < len(s) && count < n {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
			count++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

// events renders a scripted reply as the stream the API would send.
func (r Reply) events(id, model string, u coachd.Usage) []Event {
	var out []Event
	add := func(name string, v any) {
		data, err := json.Marshal(v)
		if err != nil {
			panic(fmt.Sprintf("anthropictest: %v", err)) // only our own maps get here
		}
		out = append(out, Event{Name: name, Data: data})
	}
	start := u
	start.OutputTokens = min(u.OutputTokens, 1)
	add("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": wireUsage(start)}})
	for i, b := range r.Blocks {
		add("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": b.startBlock()})
		if i == 0 {
			out = append(out, Event{Name: "ping", Data: []byte(`{"type": "ping"}`)})
		}
		for _, d := range b.deltas() {
			out = append(out, Event{Name: "content_block_delta", Data: appendDeltaEvent(nil, i, d)})
		}
		stop := strconv.AppendInt([]byte(`{"index":`), int64(i), 10)
		out = append(out, Event{Name: "content_block_stop", Data: append(stop, `,"type":"content_block_stop"}`...)})
	}
	var seq any
	if r.StopSequence != "" {
		seq = r.StopSequence
	}
	add("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": r.stopReason(), "stop_sequence": seq}, "usage": wireUsage(u)})
	out = append(out, Event{Name: "message_stop", Data: []byte(`{"type":"message_stop"}`)})
	return out
}

// message renders a scripted reply as a non-streaming message body.
func (r Reply) message(id, model string, u coachd.Usage) []byte {
	content := make([]any, len(r.Blocks))
	for i, b := range r.Blocks {
		content[i] = b.finalBlock()
	}
	var seq any
	if r.StopSequence != "" {
		seq = r.StopSequence
	}
	data, _ := json.Marshal(map[string]any{"id": id, "type": "message", "role": "assistant", "model": model,
		"content": content, "stop_reason": r.stopReason(), "stop_sequence": seq, "usage": wireUsage(u)})
	return data
}

func wireUsage(u coachd.Usage) map[string]any {
	return map[string]any{"input_tokens": u.InputTokens, "output_tokens": u.OutputTokens,
		"cache_creation_input_tokens": u.CacheCreationInputTokens, "cache_read_input_tokens": u.CacheReadInputTokens}
}

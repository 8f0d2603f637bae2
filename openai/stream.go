package openai

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/coachd/coachd"
)

// Bounds on what the upstream may send: one SSE line, and one event's data.
const (
	maxLine      = 1 << 20
	maxEventData = 4 << 20
)

// stream reads a chat completions SSE stream and assembles the message:
// a text block for content, a tool_use block per tool call, whose
// arguments arrive as fragments keyed by the call's index.
type stream struct {
	ctx    context.Context
	cancel context.CancelFunc
	body   io.ReadCloser
	sc     *bufio.Scanner
	model  string

	queue  []coachd.ModelEvent
	ev     coachd.ModelEvent
	blocks []*blockState
	text   int         // index of the open text block; -1 when none
	calls  map[int]int // tool call key → block index
	// reused maps a wire index that a server gave a second call to
	// (Ollama gives every call of a batch index 0) to that call's key.
	reused map[int]int

	id, respModel string
	finish        string
	refusal       bool
	usage         *chunkUsage
	output        int   // bytes of text and arguments streamed
	inputEstimate int64 // request size in tokens, when no usage arrives
	err           error
	done, closed  bool
	ended         bool   // [DONE] or the end of the body
	key           string // the API key, kept out of error text
}

type blockState struct {
	b       coachd.Block
	args    strings.Builder
	wireID  string   // the call's id as the server sent it
	started bool     // tool_use_start sent
	held    []string // argument fragments before the call's name arrived
}

// chunk is one chat.completion.chunk, or an error sent in the stream.
type chunk struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content   *string `json:"content"`
			Refusal   *string `json:"refusal"`
			ToolCalls []struct {
				Index    *int   `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *chunkUsage `json:"usage"`
	apiErrorBody
}

type chunkUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

func newStream(ctx context.Context, cancel context.CancelFunc, body io.ReadCloser, model, key string) *stream {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	return &stream{ctx: ctx, cancel: cancel, body: body, sc: sc, model: model, text: -1, calls: map[int]int{}, key: key}
}

func (s *stream) Next() bool {
	for len(s.queue) == 0 {
		if s.done {
			return false
		}
		if s.ended {
			s.finishMessage()
			continue
		}
		data, ok, err := s.readEvent()
		if err != nil {
			s.fail(err)
			return false
		}
		if !ok {
			s.ended = true
			continue
		}
		if err := s.accept(data); err != nil {
			s.fail(err)
			return false
		}
	}
	s.ev, s.queue = s.queue[0], s.queue[1:]
	return true
}

// readEvent returns the data of the next SSE event; ok is false at
// [DONE] or at the end of the body.
func (s *stream) readEvent() (data []byte, ok bool, err error) {
	var buf []byte
	var name string
	lines := 0
	for s.sc.Scan() {
		line := s.sc.Bytes()
		switch {
		case len(line) == 0:
			if lines == 0 {
				name = "" // an event without data: nothing to dispatch
				continue
			}
			if name == "error" {
				return nil, false, s.errorEvent(buf)
			}
			if string(bytes.TrimSpace(buf)) == "[DONE]" {
				return nil, false, nil
			}
			return buf, true, nil
		case line[0] == ':':
			continue // a comment: keep-alive
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			if lines > 0 {
				buf = append(buf, '\n')
			}
			if len(buf)+len(value) > maxEventData {
				return nil, false, &coachd.Error{Code: coachd.EAPI, Message: "model stream event too large"}
			}
			buf = append(buf, value...)
			lines++
		case "event":
			name = string(value)
		}
	}
	if err := s.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, false, &coachd.Error{Code: coachd.EAPI, Message: "model stream line too long", Err: err}
		}
		return nil, false, coachd.TransportError(s.ctx, err)
	}
	if s.ctx.Err() != nil {
		return nil, false, coachd.TransportError(s.ctx, s.ctx.Err())
	}
	if lines > 0 && string(bytes.TrimSpace(buf)) != "[DONE]" {
		return buf, true, nil // the last event lacked its blank line
	}
	return nil, false, nil
}

func (s *stream) errorEvent(data []byte) error {
	var b apiErrorBody
	if json.Unmarshal(data, &b) != nil || b.Error == nil {
		text := coachd.Redacted(string(data[:min(len(data), 4096)]), s.key)
		return &coachd.Error{Code: coachd.EAPI, Message: "model stream failed", Err: fmt.Errorf("error event: %s", coachd.UpstreamText(text, 200))}
	}
	b.redact(s.key)
	return streamError(&b)
}

// accept folds one chunk into the message and queues the events it makes.
func (s *stream) accept(data []byte) error {
	var c chunk
	if err := json.Unmarshal(data, &c); err != nil {
		return &coachd.Error{Code: coachd.EAPI, Message: "malformed model stream", Err: err}
	}
	if c.Error != nil {
		c.apiErrorBody.redact(s.key)
		return streamError(&c.apiErrorBody)
	}
	if s.id == "" {
		s.id, s.respModel = c.ID, c.Model
	}
	if c.Usage != nil {
		s.usage = c.Usage
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // n is 1: other choices are not asked for
		}
		d := ch.Delta
		if d.Content != nil && *d.Content != "" {
			s.addText(*d.Content)
		}
		if d.Refusal != nil && *d.Refusal != "" {
			s.refusal = true
			s.addText(*d.Refusal)
		}
		for _, tc := range d.ToolCalls {
			idx := s.callIndex(tc.Index, tc.ID)
			s.addCall(idx, tc.ID, tc.Function.Name, tc.Function.Arguments)
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			s.finish = *ch.FinishReason
		}
	}
	return nil
}

// callIndex keys a tool call delta: by its index, or, from servers that
// send none, by its id (repeated or new), else it continues the last call.
// A new id at an index already in use is a new call (Ollama streams every
// call of a parallel batch at index 0), keyed below zero, where no wire
// index is; the fragments after it at that index are its own.
func (s *stream) callIndex(index *int, id string) int {
	if index != nil {
		key, ok := s.reused[*index]
		if !ok {
			key = *index
		}
		if bi, used := s.calls[key]; used && id != "" && s.blocks[bi].wireID != "" && s.blocks[bi].wireID != id {
			if s.reused == nil {
				s.reused = map[int]int{}
			}
			key = -1 - len(s.calls)
			s.reused[*index] = key
		}
		return key
	}
	if id != "" {
		for idx, bi := range s.calls {
			if s.blocks[bi].wireID == id {
				return idx
			}
		}
		return len(s.calls)
	}
	return max(len(s.calls)-1, 0)
}

// callID is the id a call is stored and answered under: the server's
// when the Messages API's pattern takes it (the history may go to Claude
// later, and an answer names it), else one made from it, the same for the
// same id, which the server never sees again (the history sent back to it
// carries this one, in the call and its result alike).
func callID(id string) string {
	if coachd.ValidToolUseID(id) {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "call_" + hex.EncodeToString(sum[:12])
}

func (s *stream) addText(t string) {
	if s.text < 0 {
		s.text = len(s.blocks)
		s.blocks = append(s.blocks, &blockState{b: coachd.Block{Type: coachd.BlockText}})
	}
	s.blocks[s.text].b.Text += t
	s.output += len(t)
	s.queue = append(s.queue, coachd.ModelEvent{Type: coachd.ModelTextDelta, Index: s.text, Text: t})
}

func (s *stream) addCall(idx int, id, name, args string) {
	bi, ok := s.calls[idx]
	if !ok {
		s.text = -1 // text after a call is a new block
		bi = len(s.blocks)
		s.calls[idx] = bi
		s.blocks = append(s.blocks, &blockState{b: coachd.Block{Type: coachd.BlockToolUse}})
	}
	bs := s.blocks[bi]
	if bs.wireID == "" && id != "" {
		bs.wireID, bs.b.ID = id, callID(id)
	}
	if bs.b.Name == "" && name != "" {
		bs.b.Name = name
	}
	if args != "" {
		bs.args.WriteString(args)
		s.output += len(args)
		bs.held = append(bs.held, args)
	}
	if !bs.started && bs.b.Name != "" {
		if bs.b.ID == "" {
			bs.b.ID = callID(fmt.Sprintf("call_%s_%d", s.id, idx)) // some servers send no id
		}
		bs.started = true
		s.queue = append(s.queue, coachd.ModelEvent{Type: coachd.ModelToolUseStart, Index: bi, ID: bs.b.ID, Name: bs.b.Name})
	}
	if bs.started {
		for _, h := range bs.held {
			s.queue = append(s.queue, coachd.ModelEvent{Type: coachd.ModelInputJSONDelta, Index: bi, Text: h})
		}
		bs.held = bs.held[:0]
	}
}

// finishMessage ends a stream whose body ended: complete when a
// finish_reason came, cut short otherwise.
func (s *stream) finishMessage() {
	if s.finish == "" {
		s.fail(&coachd.Error{Code: coachd.EAPI, Message: "model stream ended before finish_reason"})
		return
	}
	if err := s.check(); err != nil {
		s.fail(err)
		return
	}
	for i, bs := range s.blocks {
		if bs.b.Type == coachd.BlockToolUse && !bs.started {
			s.fail(&coachd.Error{Code: coachd.EAPI, Message: "malformed model stream: a tool call without a name"})
			return
		}
		s.queue = append(s.queue, coachd.ModelEvent{Type: coachd.ModelBlockStop, Index: i})
	}
	s.queue = append(s.queue, coachd.ModelEvent{Type: coachd.ModelMessageDelta,
		StopReason: s.stopReason(), Usage: s.usageSoFar()})
	s.done = true
	s.Close()
}

// stopReason maps finish_reason to the Messages API's stop reasons.
// Some servers (older Ollama) answer "stop" to a reply with tool calls.
func (s *stream) stopReason() string {
	switch {
	case s.refusal || s.finish == "content_filter":
		return coachd.StopRefusal
	case s.finish == "length":
		return coachd.StopMaxTokens
	case s.finish == "tool_calls" || s.finish == "function_call" || len(s.calls) > 0:
		return coachd.StopToolUse
	}
	return coachd.StopEndTurn
}

func (s *stream) usageSoFar() coachd.Usage {
	if s.usage == nil || !s.usage.sane() {
		if s.inputEstimate == 0 && s.output == 0 {
			return coachd.Usage{}
		}
		return coachd.Usage{InputTokens: s.inputEstimate, OutputTokens: coachd.TokensOfBytes(s.output)}
	}
	var cached int64
	prompt := saneTokens(s.usage.PromptTokens)
	if d := s.usage.PromptTokensDetails; d != nil {
		cached = min(saneTokens(d.CachedTokens), prompt)
	}
	return coachd.Usage{InputTokens: prompt - cached, OutputTokens: saneTokens(s.usage.CompletionTokens),
		CacheReadInputTokens: cached}
}

func (s *stream) fail(err error) {
	s.err, s.done, s.queue = err, true, nil
	s.Close()
}

func (s *stream) Event() coachd.ModelEvent { return s.ev }

func (s *stream) Err() error { return s.err }

func (s *stream) Close() error {
	if s.closed || s.body == nil {
		return nil
	}
	s.closed = true
	err := s.body.Close()
	s.cancel()
	return err
}

// Response returns the message assembled so far. A tool call whose
// arguments are not a JSON object (cut short) gets an empty object, as the
// Anthropic adapter does.
func (s *stream) Response() *coachd.ModelResponse {
	resp := &coachd.ModelResponse{ID: s.id, Model: s.respModel, Usage: s.usageSoFar(),
		Blocks: make([]coachd.Block, 0, len(s.blocks))}
	if s.finish != "" {
		resp.StopReason = s.stopReason()
	}
	for _, bs := range s.blocks {
		b := bs.b
		if b.Type == coachd.BlockToolUse {
			if b.Name == "" {
				continue
			}
			b.Input = json.RawMessage(`{}`)
			if a := strings.TrimSpace(bs.args.String()); a != "" && json.Valid([]byte(a)) && a[0] == '{' {
				b.Input = json.RawMessage(a)
			}
		}
		resp.Blocks = append(resp.Blocks, b)
	}
	return resp
}

package anthropictest

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/coachd/coachd"
)

// Request is one request the fake received.
type Request struct {
	Method, Path string
	Raw          []byte // the body as sent
	// Body is the body parsed, for tests that read the request log; nil
	// when it is not JSON, and nil while recording is off (SetRecording):
	// a script should use the methods (Messages, HasTool, …).
	Body map[string]any
	// Header is a copy of the request's headers when recording; while
	// recording is off it is the live request's, valid during the script.
	Header http.Header
	At     time.Time
	// Stream reports whether the request asked for a stream.
	Stream bool
	// Model is the request's model.
	Model string
	// Usage is what the fake billed the request (its reply's usage).
	Usage coachd.Usage

	wire  *wireRequest
	index int // in Server.requests
}

// Messages returns the request's messages in coachd's types; string
// content becomes one text block. Each call returns fresh slices.
func (r *Request) Messages() []coachd.ModelMessage {
	if r.wire == nil {
		return nil
	}
	out := make([]coachd.ModelMessage, len(r.wire.Messages))
	for i := range out {
		m := r.wire.message(i)
		out[i] = coachd.ModelMessage{Role: m.Role, Blocks: slices.Clone(m.Blocks)}
	}
	return out
}

// ToolResults returns the tool_result blocks of the last message, so a
// script can branch: a tool call first, text once the results are in.
func (r *Request) ToolResults() []coachd.Block {
	if r.wire == nil || len(r.wire.Messages) == 0 {
		return nil
	}
	var out []coachd.Block
	for _, b := range r.wire.message(len(r.wire.Messages) - 1).Blocks {
		if b.Type == coachd.BlockToolResult {
			out = append(out, b)
		}
	}
	return out
}

// LastUserText is the text of the last user message.
func (r *Request) LastUserText() string {
	if r.wire == nil {
		return ""
	}
	for i := len(r.wire.Messages) - 1; i >= 0; i-- {
		if coachd.Role(r.wire.Messages[i].Role) == coachd.RoleUser {
			return coachd.BlocksText(r.wire.message(i).Blocks)
		}
	}
	return ""
}

// HasTool reports whether the request offers a tool named name.
func (r *Request) HasTool(name string) bool {
	if r.wire == nil {
		return false
	}
	var ms []member
	for _, t := range r.wire.Tools {
		var ok bool
		if ms, ok = members(ms[:0], t); !ok {
			continue
		}
		var got []byte // the last "name" wins, as in a map
		for _, m := range ms {
			if string(m.key) == "name" || bytes.IndexByte(m.key, '\\') >= 0 && unquote(m.key) == "name" {
				got = m.value
			}
		}
		if len(got) > 0 && got[0] == '"' && unquote(got[1:len(got)-1]) == name {
			return true
		}
	}
	return false
}

// unquote decodes the inside of a JSON string.
func unquote(b []byte) string {
	if bytes.IndexByte(b, '\\') < 0 && utf8.Valid(b) {
		return string(b)
	}
	var s string
	json.Unmarshal(append(append([]byte{'"'}, b...), '"'), &s)
	return s
}

type wireRequest struct {
	Model     string            `json:"model"`
	MaxTokens *int64            `json:"max_tokens"`
	Messages  []wireMessage     `json:"messages"`
	System    json.RawMessage   `json:"system"`
	Tools     []json.RawMessage `json:"tools"`
	Stream    bool              `json:"stream"`
	Thinking  *struct {
		Type         string `json:"type"`
		BudgetTokens int64  `json:"budget_tokens"`
	} `json:"thinking"`

	// Cut up once by parseRequest, for the cache accounting and Messages.
	sys  []json.RawMessage // the system blocks
	msgs []lazyMessage     // one per message, decoded on first use
}

// lazyMessage is a message in coachd's types, decoded when first asked
// for: a script reads the last message or two, not the whole history.
type lazyMessage struct {
	once sync.Once
	m    coachd.ModelMessage
}

// message returns message i in coachd's types. parseRequest has checked
// that every block decodes.
func (req *wireRequest) message(i int) *coachd.ModelMessage {
	l := &req.msgs[i]
	l.once.Do(func() {
		w := req.Messages[i]
		l.m.Role = coachd.Role(w.Role)
		if len(w.blocks) > 0 {
			l.m.Blocks = make([]coachd.Block, 0, len(w.blocks))
		}
		for _, raw := range w.blocks {
			var b coachd.Block
			if json.Unmarshal(raw, &b) == nil {
				l.m.Blocks = append(l.m.Blocks, b)
			}
		}
	})
	return &l.m
}

type wireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	blocks  []json.RawMessage
}

// contentBlocks reads message or system content: a string is one text
// block.
func contentBlocks(raw json.RawMessage) ([]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		b, _ := json.Marshal(map[string]string{"type": "text", "text": s})
		return []json.RawMessage{b}, nil
	}
	// The body was checked whole by json.Unmarshal: cutting it up is
	// enough.
	out, ok := elements(nil, raw)
	if !ok {
		return nil, errNotList
	}
	return out, nil
}

var errNotList = errors.New("not a list")

// apiError is an error the fake answers with, in the API's shape.
type apiError struct {
	status int
	typ    string
	msg    string
}

func (e *apiError) Error() string { return e.typ + ": " + e.msg }

func invalid(format string, args ...any) *apiError {
	return &apiError{http.StatusBadRequest, "invalid_request_error", fmt.Sprintf(format, args...)}
}

// errorType is the API's error.type for an HTTP status.
func errorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 402:
		return "billing_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 504:
		return "timeout_error"
	case 529:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

// parseRequest checks a Messages API body the way the API does.
// countOnly relaxes what count_tokens does not need.
func parseRequest(raw []byte, countOnly bool) (*wireRequest, error) {
	if len(raw) > maxRequest {
		return nil, tooLarge()
	}
	var req wireRequest
	if err := decodeRequest(raw, &req); err != nil {
		return nil, invalid("request body is not valid JSON: %v", err)
	}
	if req.Model == "" {
		return nil, invalid("model: Field required")
	}
	if !countOnly {
		if req.MaxTokens == nil {
			return nil, invalid("max_tokens: Field required")
		}
		if *req.MaxTokens < 1 {
			return nil, invalid("max_tokens: Input should be greater than or equal to 1")
		}
	}
	if t := req.Thinking; t != nil && t.Type == "enabled" {
		if t.BudgetTokens < 1024 {
			return nil, invalid("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
		}
		if !countOnly && *req.MaxTokens <= t.BudgetTokens {
			return nil, invalid("`max_tokens` must be greater than `thinking.budget_tokens`")
		}
	}
	if len(req.Messages) == 0 {
		return nil, invalid("messages: at least one message is required")
	}
	if req.Messages[0].Role != "user" {
		return nil, invalid("messages: first message must use the \"user\" role")
	}
	breakpoints := 0
	count := func(blocks []json.RawMessage) {
		for _, b := range blocks {
			if bytes.Contains(b, []byte(`"cache_control"`)) {
				breakpoints++
			}
		}
	}
	count(req.Tools)
	sys, err := contentBlocks(req.System)
	if err != nil {
		return nil, invalid("system: Input should be a valid list")
	}
	count(sys)
	req.sys = sys
	req.msgs = make([]lazyMessage, len(req.Messages))
	var ms []member
	var pending []string // tool_use ids of the previous assistant message
	images, pages := 0, 0
	for i := range req.Messages {
		m := &req.Messages[i]
		if m.Role != "user" && m.Role != "assistant" {
			return nil, invalid("messages.%d.role: Input should be 'user' or 'assistant'", i)
		}
		blocks, err := contentBlocks(m.Content)
		if err != nil || (len(blocks) == 0 && !(i == len(req.Messages)-1 && m.Role == "assistant")) {
			return nil, invalid("messages.%d: all messages must have non-empty content except for the optional final assistant message", i)
		}
		count(blocks)
		m.blocks = blocks
		var uses, results []string
		for j, raw := range blocks {
			var (
				h  blockHead
				ok bool
				b  coachd.Block
			)
			h, ms, ok = peekBlock(raw, ms)
			if !ok || h.typ == coachd.BlockImage || h.typ == coachd.BlockDocument {
				if err := json.Unmarshal(raw, &b); err != nil {
					return nil, invalid("messages.%d.content.%d: %v", i, j, err)
				}
				h = blockHead{b.Type, b.ID, b.ToolUseID}
			}
			switch h.typ {
			case coachd.BlockToolUse:
				if m.Role != "assistant" {
					return nil, invalid("messages.%d.content.%d: tool_use blocks can only be in assistant messages", i, j)
				}
				uses = append(uses, h.id)
			case coachd.BlockToolResult:
				if m.Role != "user" {
					return nil, invalid("messages.%d.content.%d: tool_result blocks can only be in user messages", i, j)
				}
				if !slices.Contains(pending, h.toolUseID) {
					return nil, invalid("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i, j, h.toolUseID)
				}
				results = append(results, h.toolUseID)
			case coachd.BlockImage, coachd.BlockDocument:
				n, err := checkMedia(fmt.Sprintf("messages.%d.content.%d", i, j), m.Role, b)
				if err != nil {
					return nil, err
				}
				pages += n
				if h.typ == coachd.BlockImage {
					images++
				}
			}
		}
		for _, id := range pending {
			if !slices.Contains(results, id) {
				return nil, invalid("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i-1, id)
			}
		}
		pending = uses
	}
	if len(pending) > 0 && !countOnly {
		// A trailing assistant message with tool_use is a prefill the API
		// cannot continue without results.
		return nil, invalid("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", len(req.Messages)-1, pending[0])
	}
	if images > maxImages {
		return nil, invalid("messages: too many images in the request: %d > %d", images, maxImages)
	}
	if pages > maxPDFPages {
		return nil, invalid("A maximum of %d PDF pages may be provided.", maxPDFPages)
	}
	if breakpoints > 4 {
		return nil, invalid("A maximum of 4 blocks with cache_control may be provided. Found %d.", breakpoints)
	}
	return &req, nil
}

// tokens is the fake's tokenizer: four bytes a token, at least one.
func tokens(n int) int64 { return max(1, int64((n+3)/4)) }

// segment is one cacheable unit of a request, in the API's cache order
// (tools, system, messages), with the hash of the prefix it ends.
type segment struct {
	prefix     [32]byte
	size       int // bytes up to and including this segment
	breakpoint bool
	ttl        time.Duration // a breakpoint's cache lifetime
}

// segments cuts a request into cache segments. cache_control itself is
// left out of the hash so a moved breakpoint still matches the prefix.
func (req *wireRequest) segments() []segment {
	n := len(req.Tools) + len(req.sys)
	for _, m := range req.Messages {
		n += len(m.blocks)
	}
	out := make([]segment, 0, n)
	h := sha256.New()
	size := 0
	var (
		buf []byte
		ms  []member
	)
	add := func(role string, raw json.RawMessage) {
		var (
			cc []byte
			bp bool
		)
		buf, cc, bp, ms = canonical(buf[:0], raw, ms)
		ttl := ttl5m
		var c struct{ TTL string }
		if bp && json.Unmarshal(cc, &c) == nil && c.TTL == "1h" {
			ttl = ttl1h
		}
		h.Write([]byte(role))
		h.Write(buf)
		if n, ok := imageSize(buf); ok && role != "tool" && role != "system" {
			size += n // billed by its pixels, not its base64
		} else if n, ok := documentSize(buf); ok && role != "tool" && role != "system" {
			size += n // billed by its pages and text, not its base64
		} else {
			size += len(buf)
		}
		var s segment
		h.Sum(s.prefix[:0])
		s.size, s.breakpoint, s.ttl = size, bp, ttl
		out = append(out, s)
	}
	for _, t := range req.Tools {
		add("tool", t)
	}
	for _, b := range req.sys {
		add("system", b)
	}
	for _, m := range req.Messages {
		for _, b := range m.blocks {
			add(m.Role, b)
		}
	}
	return out
}

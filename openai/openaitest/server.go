// Package openaitest is a fake OpenAI-compatible chat completions API
// served over HTTP: scripted replies streamed as chat.completion.chunk
// events (tool call arguments split across chunks, a usage chunk),
// HTTP and in-stream errors, stalls and cut connections, and request
// recording with the checks the real API makes on a conversation.
package openaitest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// Server is the fake. Its methods are safe for concurrent use.
type Server struct {
	ts *httptest.Server

	mu       sync.Mutex
	apiKey   string
	queue    []Reply
	fallback *Reply // SetDefault
	requests []Request
	n        int

	closed    chan struct{}
	closeOnce sync.Once
}

// New returns a fake that is not listening: serve its Handler yourself.
func New() *Server { return &Server{closed: make(chan struct{})} }

// NewServer starts a fake on a loopback port. Close it when done.
func NewServer() *Server {
	s := New()
	s.ts = httptest.NewServer(s.Handler())
	return s
}

// URL is the base URL to configure (it ends in /v1, like OpenAI's).
func (s *Server) URL() string { return s.ts.URL + "/v1" }

// Close stops the server, ending stalled streams first.
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.closed) })
	if s.ts != nil {
		s.ts.Close()
	}
}

// SetAPIKey makes the fake require "Authorization: Bearer key".
func (s *Server) SetAPIKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.apiKey = key
}

// Enqueue adds replies, served in order, one per request.
func (s *Server) Enqueue(r ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, r...)
}

// SetDefault answers r once the queue is empty (benchmarks, demos);
// without it an unscripted request is a 500.
func (s *Server) SetDefault(r Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fallback = &r
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Handler serves POST /v1/chat/completions.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	return mux
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	key := s.apiKey
	s.mu.Unlock()
	if key != "" && r.Header.Get("Authorization") != "Bearer "+key {
		writeError(w, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key", "Incorrect API key provided.")
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "", "unreadable body")
		return
	}
	req, err := parseRequest(raw)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "", err.Error())
		return
	}
	req.Header = r.Header.Clone()
	s.mu.Lock()
	s.requests = append(s.requests, *req)
	s.n++
	n := s.n
	var reply Reply
	ok := len(s.queue) > 0
	if ok {
		reply, s.queue = s.queue[0], s.queue[1:]
	} else if s.fallback != nil {
		reply, ok = *s.fallback, true
	}
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusInternalServerError, "server_error", "", "openaitest: no reply scripted")
		return
	}
	if reply.Status != 0 {
		for k, v := range reply.Header {
			w.Header()[k] = v
		}
		body := reply.Body
		if body == "" {
			body = errorBody(reply.Status)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(reply.Status)
		io.WriteString(w, body)
		return
	}
	s.stream(w, r, reply, req, n)
}

// Request is one request the fake received.
type Request struct {
	Header        http.Header
	Raw           json.RawMessage
	Model         string          `json:"model"`
	Messages      []Message       `json:"messages"`
	Tools         []Tool          `json:"tools"`
	ToolChoice    json.RawMessage `json:"tool_choice"`
	MaxTokens     int64           `json:"max_tokens"`
	Stream        bool            `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	User string `json:"user"`
}

// Message is one message of a request.
type Message struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []ToolCall      `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
}

// Text returns a message's content as text: the string, or its text parts.
func (m Message) Text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct{ Type, Text string }
	_ = json.Unmarshal(m.Content, &parts)
	var sb strings.Builder
	for _, p := range parts {
		sb.WriteString(p.Text)
	}
	return sb.String()
}

// ToolCall is an assistant message's tool call.
type ToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Tool is a declared function.
type Tool struct {
	Type     string `json:"type"`
	Function struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// ToolResults returns the tool messages after the last assistant message:
// tool_call_id → content.
func (r *Request) ToolResults() map[string]string {
	out := map[string]string{}
	for i := len(r.Messages) - 1; i >= 0 && r.Messages[i].Role != "assistant"; i-- {
		if m := r.Messages[i]; m.Role == "tool" {
			out[m.ToolCallID] = m.Text()
		}
	}
	return out
}

// LastUserText is the text of the last user message.
func (r *Request) LastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Text()
		}
	}
	return ""
}

// parseRequest decodes a request and checks it as the API does: a model,
// messages, valid roles, and every assistant tool call answered by a tool
// message before the next other message (and no tool message unasked).
func parseRequest(raw []byte) (*Request, error) {
	var req Request
	if err := json.Unmarshal(raw, &req); err != nil {
		return nil, fmt.Errorf("body is not JSON: %v", err)
	}
	req.Raw = raw
	if req.Model == "" {
		return nil, fmt.Errorf("you must provide a model parameter")
	}
	if len(req.Messages) == 0 {
		return nil, fmt.Errorf("messages must not be empty")
	}
	open := map[string]bool{}
	for i, m := range req.Messages {
		switch m.Role {
		case "system", "user", "assistant":
			if len(open) > 0 {
				return nil, fmt.Errorf("messages[%d]: tool_calls %v were not answered by tool messages", i, keys(open))
			}
			for _, tc := range m.ToolCalls {
				if tc.ID == "" || tc.Function.Name == "" || !json.Valid([]byte(tc.Function.Arguments)) {
					return nil, fmt.Errorf("messages[%d]: a tool call needs id, name and JSON arguments", i)
				}
				open[tc.ID] = true
			}
		case "tool":
			if !open[m.ToolCallID] {
				return nil, fmt.Errorf("messages[%d]: role 'tool' must answer a preceding tool_calls id, not %q", i, m.ToolCallID)
			}
			delete(open, m.ToolCallID)
		default:
			return nil, fmt.Errorf("messages[%d]: unknown role %q", i, m.Role)
		}
	}
	if len(open) > 0 {
		return nil, fmt.Errorf("tool_calls %v were not answered by tool messages", keys(open))
	}
	for i, t := range req.Tools {
		if t.Type != "function" || t.Function.Name == "" || !json.Valid(t.Function.Parameters) {
			return nil, fmt.Errorf("tools[%d]: a function tool needs a name and JSON parameters", i)
		}
	}
	return &req, nil
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func errorBody(status int) string {
	typ, code := "server_error", ""
	switch status {
	case http.StatusTooManyRequests:
		typ, code = "requests", "rate_limit_exceeded"
	case http.StatusBadRequest:
		typ = "invalid_request_error"
	case http.StatusUnauthorized:
		typ, code = "invalid_request_error", "invalid_api_key"
	case http.StatusNotFound:
		typ, code = "invalid_request_error", "model_not_found"
	case http.StatusServiceUnavailable:
		typ = "service_unavailable"
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": http.StatusText(status), "type": typ, "code": nullable(code)}})
	return string(b)
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func writeError(w http.ResponseWriter, status int, typ, code, msg string) {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": nullable(code)}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// Package openai implements coachd.Model over the OpenAI-compatible chat
// completions API (OpenAI, vLLM, Ollama, LiteLLM and other proxies):
// streaming, tool calls, usage and error mapping, with plain net/http.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coachd/coachd"
)

// DefaultBaseURL is OpenAI's API; vLLM, Ollama and LiteLLM serve the same
// paths under their own base URL (http://localhost:11434/v1 for Ollama).
const DefaultBaseURL = "https://api.openai.com/v1"

// DefaultMaxTokens is used when a request leaves MaxTokens at zero.
const DefaultMaxTokens = 4096

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 64 << 10

// Config configures the adapter.
type Config struct {
	BaseURL string // DefaultBaseURL when empty
	APIKey  string // sent as a bearer token when set; local servers need none
	Model   string // default model, for requests that name none
	// Timeout bounds each attempt, including reading the whole stream.
	Timeout time.Duration
	// MaxRetries is how often a refused request (429, 5xx, connection
	// error) is retried before any byte of a reply was read. 0 means 2;
	// a negative value means none.
	MaxRetries int
	HTTPClient *http.Client
	// Logger reports, once per model and feature, what a request asked for
	// that the chat completions API cannot carry.
	Logger *slog.Logger
}

// Model is a coachd.Model backed by an OpenAI-compatible chat completions
// endpoint.
type Model struct {
	cfg      Config
	client   *http.Client
	endpoint string
	// completionTokens: the upstream is OpenAI's own API (or Azure's),
	// which refuses max_tokens for its current models (gpt-5.x, o-series)
	// and takes max_completion_tokens; other servers read max_tokens.
	completionTokens bool
	degraded         sync.Map // model + "\x00" + feature → true: logged once
}

var _ coachd.Model = (*Model)(nil)

// New returns a Model for cfg.
func New(cfg Config) *Model {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	switch {
	case cfg.MaxRetries == 0:
		cfg.MaxRetries = 2
	case cfg.MaxRetries < 0:
		cfg.MaxRetries = 0
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	// A redirect would take the conversation (and, to a host of the same
	// domain, the key) elsewhere.
	client := coachd.NoRedirects(cfg.HTTPClient)
	return &Model{cfg: cfg, client: client, endpoint: strings.TrimRight(cfg.BaseURL, "/") + "/chat/completions",
		completionTokens: openAIHost(cfg.BaseURL)}
}

// openAIHost reports whether base is OpenAI's API or an Azure OpenAI
// resource.
func openAIHost(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	h := strings.ToLower(u.Hostname())
	return h == "api.openai.com" || strings.HasSuffix(h, ".openai.azure.com")
}

// Stream starts one streaming chat completion. Errors, including a bad
// request, surface through the returned stream's Err.
func (m *Model) Stream(ctx context.Context, req *coachd.ModelRequest) coachd.ModelStream {
	model := req.Model
	if model == "" {
		model = m.cfg.Model
	}
	body, err := m.request(model, req)
	if err != nil {
		return failed(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	if m.cfg.Timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, m.cfg.Timeout)
	}
	resp, err := m.post(ctx, body)
	if err != nil {
		cancel()
		return failed(err)
	}
	s := newStream(ctx, cancel, resp.Body, model, m.cfg.APIKey)
	// Input a provider does not count (no usage chunk) is priced by size.
	s.inputEstimate = coachd.TokensOfBytes(len(body))
	return s
}

// post sends the request, retrying refusals the upstream may get over
// (busy, 5xx, a connection that failed) with a growing pause, or the one
// its retry-after asks for.
func (m *Model) post(ctx context.Context, body []byte) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		resp, err := m.send(ctx, body)
		if err == nil {
			return resp, nil
		}
		ce, _ := err.(*coachd.Error)
		if ce == nil || !retryable(ce) || ctx.Err() != nil || attempt >= m.cfg.MaxRetries {
			return nil, err
		}
		wait := time.Duration(500<<attempt) * time.Millisecond
		if ce.RetryAfter > 0 && ce.RetryAfter < 30*time.Second {
			wait = ce.RetryAfter
		}
		t := time.NewTimer(min(wait, 8*time.Second))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, coachd.TransportError(ctx, ctx.Err())
		case <-t.C:
		}
	}
}

// retryable: busy, a 5xx, or a connection that failed; not a refusal
// that would be refused again (a bad request, a key, a spent quota).
func retryable(ce *coachd.Error) bool {
	if ce.Retryable {
		return true
	}
	var he *httpError
	if errors.As(ce.Err, &he) {
		return he.status >= 500 && ce.Code == coachd.EAPI
	}
	return ce.Code == coachd.EAPI
}

func (m *Model) send(ctx context.Context, body []byte) (*http.Response, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, m.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, &coachd.Error{Code: coachd.EINVALID, Message: "bad model base URL", Err: err}
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "text/event-stream")
	if m.cfg.APIKey != "" {
		hr.Header.Set("Authorization", "Bearer "+m.cfg.APIKey)
	}
	resp, err := m.client.Do(hr)
	if err != nil {
		return nil, coachd.TransportError(ctx, err)
	}
	if resp.StatusCode >= 300 {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		resp.Body.Close()
		// A proxy may quote the bearer token it was sent.
		return nil, statusError(resp.StatusCode, resp.Header, []byte(coachd.Redacted(string(raw), m.cfg.APIKey)))
	}
	return resp, nil
}

// degrade logs, once per model and feature, that a request asked for
// something this API cannot carry and what was done instead.
func (m *Model) degrade(model, feature, reason string) {
	if _, seen := m.degraded.LoadOrStore(model+"\x00"+feature, true); seen {
		return
	}
	m.cfg.Logger.Warn("model feature not available from this provider", "provider", "openai",
		"model", model, "feature", feature, "reason", reason)
}

// failed is a stream that failed before it started.
func failed(err error) coachd.ModelStream {
	return &stream{err: err, done: true, blocks: nil}
}

// wire types of the request.
type (
	chatRequest struct {
		Model         string          `json:"model"`
		Messages      []chatMessage   `json:"messages"`
		Tools         []chatTool      `json:"tools,omitempty"`
		ToolChoice    any             `json:"tool_choice,omitempty"`
		Parallel      *bool           `json:"parallel_tool_calls,omitempty"`
		MaxTokens     int64           `json:"max_tokens,omitempty"`
		MaxCompletion int64           `json:"max_completion_tokens,omitempty"`
		Temperature   *float64        `json:"temperature,omitempty"`
		Stop          []string        `json:"stop,omitempty"`
		User          string          `json:"user,omitempty"`
		Stream        bool            `json:"stream"`
		StreamOptions json.RawMessage `json:"stream_options"`
	}
	chatMessage struct {
		Role       string     `json:"role"`
		Content    any        `json:"content"` // string, []contentPart or nil
		ToolCalls  []toolCall `json:"tool_calls,omitempty"`
		ToolCallID string     `json:"tool_call_id,omitempty"`
	}
	contentPart struct {
		Type     string    `json:"type"` // text, image_url
		Text     string    `json:"text,omitempty"`
		ImageURL *imageURL `json:"image_url,omitempty"`
	}
	imageURL struct {
		URL string `json:"url"`
	}
	toolCall struct {
		ID       string       `json:"id"`
		Type     string       `json:"type"`
		Function functionCall `json:"function"`
	}
	functionCall struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	chatTool struct {
		Type     string       `json:"type"`
		Function functionDecl `json:"function"`
	}
	functionDecl struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	}
)

// Package anthropic implements coachd.Model over the official Anthropic Go
// SDK: streaming, tools, extended thinking, prompt caching, usage, retries
// and error mapping. Nothing else in coachd imports the SDK.
package anthropic

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/coachd/coachd"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/anthropics/anthropic-sdk-go/packages/param"
)

// DefaultModel is used when neither the config nor the request names one.
const DefaultModel = "claude-sonnet-5-5"

// DefaultMaxTokens is used when a request leaves MaxTokens at zero.
const DefaultMaxTokens = 4096

// Config configures the adapter. The zero value talks to api.anthropic.com
// with the SDK's defaults (ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL are read
// by cmd/, not here).
type Config struct {
	APIKey  string
	BaseURL string
	Model   string // default model; DefaultModel when empty
	// Timeout bounds each attempt, including reading the whole stream.
	Timeout time.Duration
	// MaxRetries is how often the SDK retries the initial request (429,
	// 5xx, connection errors). 0 means the SDK default (2); use a negative
	// value for no retries.
	MaxRetries int
	// NoCache turns prompt-caching breakpoints off for every request.
	NoCache    bool
	HTTPClient *http.Client
	// Logger reports, once, what a platform cannot carry; nil discards.
	Logger *slog.Logger
}

// Model is a coachd.Model backed by the Anthropic Messages API.
type Model struct {
	client   sdk.Client
	cfg      Config
	platform string // "" (the Anthropic API), bedrock or vertex
	noUser   sync.Once
}

var _ coachd.Model = (*Model)(nil)

// New returns a Model for cfg.
func New(cfg Config) *Model {
	if cfg.Model == "" {
		cfg.Model = DefaultModel
	}
	return &Model{client: newClient(cfg), cfg: cfg}
}

// newClient builds the SDK client for cfg; extra options (a platform's)
// are applied last.
func newClient(cfg Config, extra ...option.RequestOption) sdk.Client {
	var opts []option.RequestOption
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if cfg.Timeout > 0 {
		opts = append(opts, option.WithRequestTimeout(cfg.Timeout))
	}
	switch {
	case cfg.MaxRetries > 0:
		opts = append(opts, option.WithMaxRetries(cfg.MaxRetries))
	case cfg.MaxRetries < 0:
		opts = append(opts, option.WithMaxRetries(0))
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Transport: upstreamTransport()}
	}
	// Extra options (Bedrock's signing, Vertex's authenticated client)
	// come last, so theirs win.
	opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	return sdk.NewClient(append(opts, extra...)...)
}

// upstreamTransport is the default transport's settings with room for
// the concurrent turns of a busy server: net/http keeps only 2 idle
// connections per host by default, so under load most calls to the one
// upstream host opened a new connection (and, to the real API, a new TLS
// session).
func upstreamTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 256
	t.MaxIdleConnsPerHost = 128
	return t
}

// Stream starts one streaming Messages API call. Errors, including a bad
// request, surface through the returned stream's Err.
func (m *Model) Stream(ctx context.Context, req *coachd.ModelRequest) coachd.ModelStream {
	params, err := m.params(req)
	if err != nil {
		return &stream{ctx: ctx, err: err, done: true}
	}
	s := m.client.Messages.NewStreaming(ctx, params)
	return &stream{ctx: ctx, sdk: s}
}

// params converts a coachd request to SDK params. Blocks, system blocks and
// tools travel as their exact JSON (param.Override), so fields the SDK's
// param types do not know (and would drop) reach the API unchanged.
func (m *Model) params(req *coachd.ModelRequest) (sdk.MessageNewParams, error) {
	var p sdk.MessageNewParams
	p.Model = sdk.Model(m.cfg.Model)
	if req.Model != "" {
		p.Model = sdk.Model(req.Model)
	}
	p.MaxTokens = req.MaxTokens
	if p.MaxTokens <= 0 {
		p.MaxTokens = DefaultMaxTokens
	}
	markTool := false
	if !m.cfg.NoCache && !req.NoCache {
		req, markTool = coachd.CacheMarks(req) // the placement rule is documented there
	}
	for i, t := range req.Tools {
		raw, err := toolJSON(t)
		if err != nil {
			return p, err
		}
		if markTool && i == len(req.Tools)-1 {
			raw = withCacheControl(raw)
		}
		p.Tools = append(p.Tools, param.Override[sdk.ToolUnionParam](json.RawMessage(raw)))
	}
	// Blocks go in as themselves: the SDK encodes each (Block.MarshalJSON,
	// compacted as json.Marshal would) once, when it writes the body,
	// instead of once here into a copy and again there. A block without a
	// type, the one a Block cannot encode, is refused here as before.
	if len(req.System) > 0 {
		p.System = make([]sdk.TextBlockParam, 0, len(req.System))
	}
	for i, b := range req.System {
		if b.Type == "" {
			return p, coachd.Errorf(coachd.EINVALID, "system block %d: coachd: block without type", i)
		}
		p.System = append(p.System, param.Override[sdk.TextBlockParam](b))
	}
	if len(req.Messages) > 0 {
		p.Messages = make([]sdk.MessageParam, 0, len(req.Messages))
	}
	for i, msg := range req.Messages {
		mp := sdk.MessageParam{Role: sdk.MessageParamRole(msg.Role)}
		if len(msg.Blocks) > 0 {
			mp.Content = make([]sdk.ContentBlockParamUnion, 0, len(msg.Blocks))
		}
		for j, b := range msg.Blocks {
			if b.Type == "" {
				return p, coachd.Errorf(coachd.EINVALID, "message %d block %d: coachd: block without type", i, j)
			}
			mp.Content = append(mp.Content, param.Override[sdk.ContentBlockParamUnion](b))
		}
		p.Messages = append(p.Messages, mp)
	}
	if tc := req.ToolChoice; tc != nil {
		raw, err := json.Marshal(tc)
		if err != nil {
			return p, coachd.Errorf(coachd.EINVALID, "tool_choice: %v", err)
		}
		p.ToolChoice = param.Override[sdk.ToolChoiceUnionParam](json.RawMessage(raw))
	}
	if req.ThinkingBudget > 0 {
		p.Thinking = sdk.ThinkingConfigParamOfEnabled(req.ThinkingBudget)
	}
	if req.Temperature != nil {
		p.Temperature = param.NewOpt(*req.Temperature)
	}
	if len(req.StopSequences) > 0 {
		p.StopSequences = req.StopSequences
	}
	if req.UserID != "" && m.platform == platformBedrock {
		// Bedrock refuses the body ("extraneous key [metadata] is not
		// permitted"): the user id is left out, and said so once.
		m.noUser.Do(func() {
			if m.cfg.Logger != nil {
				m.cfg.Logger.Warn("model feature not available from this provider", "provider", platformBedrock,
					"feature", "metadata.user_id", "reason", "Bedrock takes no metadata; requests are sent without the user id")
			}
		})
	} else if req.UserID != "" {
		p.Metadata = sdk.MetadataParam{UserID: param.NewOpt(req.UserID)}
	}
	return p, nil
}

func toolJSON(t coachd.ToolSpec) ([]byte, error) {
	schema := t.InputSchema
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	raw, err := json.Marshal(struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		InputSchema json.RawMessage `json:"input_schema"`
	}{t.Name, t.Description, schema})
	if err != nil {
		return nil, coachd.Errorf(coachd.EINVALID, "tool %q: %v", t.Name, err)
	}
	return raw, nil
}

// withCacheControl adds an ephemeral cache_control to a JSON object.
func withCacheControl(obj []byte) []byte {
	const cc = `,"cache_control":{"type":"ephemeral"}}`
	out := make([]byte, 0, len(obj)+len(cc))
	out = append(out, obj[:len(obj)-1]...)
	return append(out, cc...)
}

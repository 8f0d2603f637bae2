// Package anthropic implements coachd.Model over the official Anthropic Go
// SDK: streaming, tools, extended thinking, prompt caching, usage, retries
// and error mapping. Nothing else in coachd imports the SDK.
package anthropic

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coachd/coachd"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/anthropics/anthropic-sdk-go/packages/param"
	"github.com/anthropics/anthropic-sdk-go/packages/ssestream"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/trace"
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
	NoCache bool
	// Untraced says the program installs no OpenTelemetry tracer
	// provider, so the SDK's span of a call would record nothing. A call
	// whose context carries no trace context and no baggage then skips
	// the span, which would also send nothing upstream: the span's
	// attributes alone were 1.3 % of coachd's CPU under load
	// (BENCHMARKS.md). A call that carries either keeps its span, and
	// so its trace-context headers.
	Untraced bool
	// HTTPClient sends the requests; one without a CheckRedirect of its
	// own follows no redirect (coachd.NoRedirects).
	HTTPClient *http.Client
	// Logger reports, once, what a platform cannot carry; nil discards.
	Logger *slog.Logger
}

// Model is a coachd.Model backed by the Anthropic Messages API.
type Model struct {
	client   sdk.Client
	tools    toolCache
	cfg      Config
	platform string      // "" (the Anthropic API), bedrock or vertex
	tokens   *sentTokens // what Vertex's or Bedrock's own code sent; nil elsewhere
	noUser   sync.Once
	// spanContent: the SDK's spans carry the request's content (its own
	// setting, ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE=content).
	spanContent bool
	// sdkDecode: the SDK decodes every stream's events (tests compare).
	sdkDecode bool
	lastBody  atomic.Int64 // the last Messages body's length (bodyCap)
}

var _ coachd.Model = (*Model)(nil)

// New returns a Model for cfg.
func New(cfg Config) *Model {
	if cfg.Model == "" {
		cfg.Model = DefaultModel
	}
	return &Model{client: newClient(cfg), cfg: cfg,
		spanContent: strings.EqualFold(os.Getenv("ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE"), "content")}
}

// newClient builds the SDK client for cfg; extra options (a platform's)
// are applied last. No option here may change the JSON body (WithJSONSet,
// WithJSONDel): each request's WithRequestBody replaces the body they
// would have changed (body.go).
func newClient(cfg Config, extra ...option.RequestOption) sdk.Client {
	// The SDK reads nothing from the environment: without
	// ANTHROPIC_API_KEY there it adds ANTHROPIC_AUTH_TOKEN, a profile's
	// credentials or ANTHROPIC_CUSTOM_HEADERS, coachd's own, to a
	// pack's base_url too. cmd/coachd passes every setting itself.
	opts := []option.RequestOption{option.WithoutEnvironmentDefaults()}
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
	cfg.HTTPClient = coachd.NoRedirects(cfg.HTTPClient)
	opts = append(opts, option.WithMiddleware(capErrorBody))
	// Extra options (Bedrock's signing, Vertex's authenticated client)
	// come last, so theirs win.
	opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	return sdk.NewClient(append(opts, extra...)...)
}

// upstreamTransport is the default transport's settings with room for
// the concurrent turns of a busy server: net/http keeps only 2 idle
// connections per host by default, so under load most calls to the one
// upstream host opened a new connection (and, to the real API, a new TLS
// session). Its write buffer holds a coach's usual request whole, headers
// and body: with the default 4 KiB a body past it went out in a second
// write, through a 32 KiB copy buffer allocated for each request.
func upstreamTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 256
	t.MaxIdleConnsPerHost = 128
	t.WriteBufferSize = 32 << 10
	return t
}

// Stream starts one streaming Messages API call. Errors, including a bad
// request, surface through the returned stream's Err.
func (m *Model) Stream(ctx context.Context, req *coachd.ModelRequest) coachd.ModelStream {
	markTool := false
	if !m.cfg.NoCache && !req.NoCache {
		req, markTool = coachd.CacheMarks(req) // the placement rule is documented there
	}
	body, err := m.appendBody(make([]byte, 0, m.bodyCap(req)), req, bodyMessages, markTool)
	if err != nil {
		return &stream{ctx: ctx, err: err, done: true, model: m}
	}
	m.lastBody.Store(int64(len(body)))
	// The SDK sends this body (see body.go), with its own headers,
	// middleware and retries. The response comes back too: unless the
	// SDK's span follows its events, coachd decodes them (sse.go).
	var res *http.Response
	untraced := m.cfg.Untraced && !carriesTrace(ctx)
	if untraced && !m.sdkDecode {
		// Without a span the SDK's streaming method adds nothing coachd
		// needs: its JSONSet("stream", true) copied the whole body to
		// set a key the body has first already, and its stream, unused
		// here, held a 5 KiB event (and it prints a warning, each
		// call, for thinking "enabled" on a few models). Post sends the
		// same bytes with the same headers, middleware and retries
		// (TestPostSendsSameCall).
		err := m.client.Post(ctx, "v1/messages", nil, &res, option.WithRequestBody("application/json", body), noSpan)
		st := &stream{ctx: ctx, model: m}
		if err == nil {
			st.sse = newSSEReader(res)
		}
		if st.sse == nil {
			// An error, or an answer that is not text/event-stream:
			// the SDK's stream, as its streaming method makes it.
			st.sdk = ssestream.NewStream[sdk.MessageStreamEventUnion](ssestream.NewDecoder(res), err)
		}
		return st
	}
	opts := []option.RequestOption{option.WithRequestBody("application/json", body), option.WithResponseInto(&res), noSpan}
	if !untraced {
		opts = opts[:2]
	}
	s := m.client.Messages.NewStreaming(ctx, m.params(req), opts...)
	st := &stream{ctx: ctx, sdk: s, model: m}
	if s.Err() == nil && !m.sdkDecode {
		st.sse = newSSEReader(res)
	}
	return st
}

// secrets are the credentials coachd sends that no upstream text may
// quote: the API key, and the credentials a platform's own code adds where
// the SDK's error does not see them (Vertex's OAuth token, Bedrock's).
func (m *Model) secrets() []string {
	if m.tokens == nil {
		return []string{m.cfg.APIKey}
	}
	return append(m.tokens.tokens(), m.cfg.APIKey)
}

// noSpan turns the SDK's span of a call off (Config.Untraced).
var noSpan = option.WithoutOpenTelemetry()

// carriesTrace reports whether ctx has what the SDK's span would pass on
// upstream even when it records nothing: a trace context, or baggage.
func carriesTrace(ctx context.Context) bool {
	return trace.SpanContextFromContext(ctx).IsValid() || baggage.FromContext(ctx).Len() > 0
}

// emptyBody is what the params encode to: the body is coachd's own.
var emptyBody any = json.RawMessage(`{}`)

// params are the SDK params beside a body coachd wrote: they encode to an
// empty object (the SDK replaces it by the body) and carry what the SDK
// itself reads of a request, for its spans and warnings (model, max
// tokens, temperature, thinking, stop sequences).
func (m *Model) params(req *coachd.ModelRequest) sdk.MessageNewParams {
	p := param.Override[sdk.MessageNewParams](emptyBody)
	p.Model = m.model(req)
	p.MaxTokens = req.MaxTokens
	if p.MaxTokens <= 0 {
		p.MaxTokens = DefaultMaxTokens
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
	if m.spanContent {
		// Asked to, the SDK's spans record the system prompt and the
		// messages from the params (the body does not come from them).
		for _, b := range req.System {
			p.System = append(p.System, param.Override[sdk.TextBlockParam](b))
		}
		for _, msg := range req.Messages {
			mp := sdk.MessageParam{Role: sdk.MessageParamRole(msg.Role)}
			for _, b := range msg.Blocks {
				mp.Content = append(mp.Content, param.Override[sdk.ContentBlockParamUnion](b))
			}
			p.Messages = append(p.Messages, mp)
		}
	}
	return p
}

// model is the model req is for.
func (m *Model) model(req *coachd.ModelRequest) sdk.Model {
	if req.Model != "" {
		return sdk.Model(req.Model)
	}
	return sdk.Model(m.cfg.Model)
}

// sendsUserID reports whether the platform takes metadata.user_id.
func (m *Model) sendsUserID() bool {
	if m.platform != platformBedrock {
		return true
	}
	// Bedrock refuses the body ("extraneous key [metadata] is not
	// permitted"): the user id is left out, and said so once.
	m.noUser.Do(func() {
		if m.cfg.Logger != nil {
			m.cfg.Logger.Warn("model feature not available from this provider", "provider", platformBedrock,
				"feature", "metadata.user_id", "reason", "Bedrock takes no metadata; requests are sent without the user id")
		}
	})
	return false
}

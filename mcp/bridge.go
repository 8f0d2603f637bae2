package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coachd/coachd"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bridge serves, over t (stdio for `coachd mcp`), the MCP server a
// running coachd serves at endpoint (…/v1/mcp), authenticated with a
// user's key: one implementation of the tools (the server's), two
// transports. The remote tool list is read at start and again as it may
// change; each call is forwarded with its arguments and _meta. log
// (nil: none) hears of waiting for coachd and of reaching it.
func Bridge(ctx context.Context, endpoint, key string, t sdk.Transport, hc *http.Client, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if hc == nil {
		hc = &http.Client{}
	}
	h := *hc
	rt := h.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	h.Transport = sentTransport{headerTransport{h: http.Header{"Authorization": {"Bearer " + key}}, next: rt}}
	// The transport adds the key at every hop: a redirect would carry it
	// to wherever it points.
	h.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
		return fmt.Errorf("the server answers with a redirect to %s: use that URL (the key is not sent to where a redirect points)", req.URL.Redacted())
	}
	r := &remote{endpoint: endpoint, hc: &h}
	defer r.close()
	// Tools are announced with listChanged even while none is known: a
	// desktop client may start the bridge before coachd, and hears of
	// coachd's tools when it answers.
	srv := sdk.NewServer(&sdk.Implementation{Name: "coachd", Version: "1"}, &sdk.ServerOptions{
		Capabilities: &sdk.ServerCapabilities{Logging: &sdk.LoggingCapabilities{}, Tools: &sdk.ToolCapabilities{ListChanged: true}}})
	b := &bridgeTools{r: r, srv: srv, have: map[string]string{}, log: log}
	n, err := b.sync(ctx)
	switch {
	case err != nil && !unreachable(err):
		return err // coachd answered, and refused (a wrong key, a redirect…)
	case err != nil:
		// The desktop client keeps stderr as the server's log: the one
		// place a user looks when coachd's tools do not show.
		log.Warn("coachd is not reachable; waiting for it", "url", endpoint, "err", err)
	case n == 0:
		return errors.New("the server offers no tools")
	}
	// coachd's list changes as a pack's MCP servers start and stop: ask
	// again when the client lists, and now and then, so that a change
	// reaches the client (the SDK sends notifications/tools/list_changed).
	srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			switch {
			case method == "tools/list":
				b.sync(ctx) // on failure the last list is served
			case method == "tools/call" && !b.synced.Load():
				// coachd has not answered yet: no tool is known.
				if _, err := b.sync(ctx); err != nil {
					if unreachable(err) {
						return nil, fmt.Errorf("coachd is not reachable at %s: the call was not sent (%w)", endpoint, err)
					}
					return nil, err
				}
			}
			return next(ctx, method, req)
		}
	})
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	go b.every(ctx, bridgeRelist)
	return srv.Run(ctx, t)
}

// bridgeRelist is how often the bridge asks coachd for its tool list;
// until coachd first answers, it asks after bridgeRetryMin, doubling up
// to bridgeRetryMax.
const (
	bridgeRelist   = time.Minute
	bridgeRetryMin = 250 * time.Millisecond
	bridgeRetryMax = 10 * time.Second
)

// unreachable reports whether err is a failure to reach coachd (nothing
// listens at the URL, the network is down), not coachd's answer.
func unreachable(err error) bool {
	var op *net.OpError
	var ua unavailableError
	return (errors.As(err, &op) || errors.As(err, &ua)) && !errors.As(err, new(*refusedError))
}

// unavailableError is a 502 or 503 on a request that is not a call: a
// proxy's answer for a coachd that is not up, or coachd not ready.
type unavailableError string

func (e unavailableError) Error() string { return "coachd is unavailable: " + string(e) }

// bridgeTools keeps the bridge's tools those coachd lists.
type bridgeTools struct {
	r    *remote
	srv  *sdk.Server
	log  *slog.Logger
	mu   sync.Mutex
	have map[string]string // name → the tool as coachd listed it (JSON)
	// synced is set once coachd has listed its tools.
	synced atomic.Bool
}

// sync lists coachd's tools and adds, replaces and removes the bridge's
// to match; it returns how many there are.
func (b *bridgeTools) sync(ctx context.Context) (int, error) {
	sess, err := b.r.session(ctx)
	if err != nil {
		return 0, err
	}
	var list []*sdk.Tool
	for tool, err := range sess.Tools(ctx, nil) {
		if err != nil {
			b.r.forget(sess, err)
			return 0, fmt.Errorf("list tools: %w", err)
		}
		if m, ok := tool.InputSchema.(map[string]any); ok && m["type"] == "object" {
			list = append(list, tool)
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	seen := map[string]bool{}
	for _, tool := range list {
		name := tool.Name
		raw, _ := json.Marshal(tool)
		seen[name] = true
		if b.have[name] == string(raw) {
			continue
		}
		b.have[name] = string(raw)
		b.srv.AddTool(tool, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return b.r.call(ctx, &sdk.CallToolParams{Meta: req.Params.Meta, Name: name, Arguments: req.Params.Arguments})
		})
	}
	var gone []string
	for name := range b.have {
		if !seen[name] {
			gone = append(gone, name)
			delete(b.have, name)
		}
	}
	if len(gone) > 0 {
		b.srv.RemoveTools(gone...)
	}
	if !b.synced.Swap(true) {
		b.log.Info("reached coachd", "url", b.r.endpoint, "tools", len(b.have))
	}
	return len(b.have), nil
}

// every syncs each period until ctx ends; until coachd first answers,
// sooner, with a bounded backoff.
func (b *bridgeTools) every(ctx context.Context, period time.Duration) {
	for wait := bridgeRetryMin; !b.synced.Load(); wait = min(2*wait, bridgeRetryMax) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		sctx, cancel := context.WithTimeout(ctx, period)
		b.sync(sctx)
		cancel()
	}
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			sctx, cancel := context.WithTimeout(ctx, period)
			b.sync(sctx)
			cancel()
		}
	}
}

// remote is the client side of the bridge. A call is sent once: only a
// call whose request never left (the connection was already broken) is
// sent again, on a new connection. One dial at a time, outside mu: calls
// whose clients give up, and close, do not wait behind a reconnect.
type remote struct {
	endpoint string
	hc       *http.Client
	dial     chan struct{} // held while connecting; nil: made on first use
	once     sync.Once
	mu       sync.Mutex
	sess     *sdk.ClientSession
	closed   bool
}

func (r *remote) session(ctx context.Context) (*sdk.ClientSession, error) {
	r.once.Do(func() { r.dial = make(chan struct{}, 1) })
	select {
	case r.dial <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("connect to %s: %w", r.endpoint, ctx.Err())
	}
	defer func() { <-r.dial }()
	r.mu.Lock()
	sess, closed := r.sess, r.closed
	r.mu.Unlock()
	switch {
	case closed:
		return nil, errors.New("the bridge is shut down")
	case sess != nil:
		return sess, nil
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "coachd-mcp", Version: "1"}, &sdk.ClientOptions{Capabilities: &sdk.ClientCapabilities{}})
	sess, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: r.endpoint, HTTPClient: r.hc, DisableStandaloneSSE: true}, nil)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", r.endpoint, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		sess.Close()
		return nil, errors.New("the bridge is shut down")
	}
	r.sess = sess
	return sess, nil
}

func (r *remote) call(ctx context.Context, p *sdk.CallToolParams) (*sdk.CallToolResult, error) {
	for retried := false; ; retried = true {
		sess, err := r.session(ctx)
		if err != nil {
			return nil, err
		}
		sent := new(atomic.Bool)
		res, err := sess.CallTool(context.WithValue(ctx, sentKey{}, sent), p)
		switch {
		case err == nil:
			return res, nil
		case ctx.Err() != nil:
			return nil, err
		case sent.Load():
			// It reached the server, or may have: the tool may have run,
			// and sending it again could run it twice.
			if answered(err) {
				return nil, err
			}
			return nil, fmt.Errorf("%s: the connection to coachd broke after the call was sent: it may have run, and is not sent again: %w", p.Name, err)
		case retried || !errors.Is(err, sdk.ErrConnectionClosed):
			return nil, err
		}
		// The connection was already broken: the call never left.
		r.forget(sess, err)
	}
}

// forget drops sess after err when its connection is closed: the next
// use connects again.
func (r *remote) forget(sess *sdk.ClientSession, err error) {
	if !errors.Is(err, sdk.ErrConnectionClosed) {
		return
	}
	r.mu.Lock()
	if r.sess == sess {
		r.sess = nil
	}
	r.mu.Unlock()
}

// answered reports whether err is the server's own JSON-RPC answer to a
// call, not a transport's failure or a closing connection's.
func answered(err error) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we) && !errors.Is(err, sdk.ErrConnectionClosed) &&
		we.Code != closingCode && we.Code != clientClosingCode && we.Code != rejectedCode
}

// JSON-RPC codes the SDK uses for a closing connection and a request its
// transport refused.
const (
	clientClosingCode = -32003
	closingCode       = -32004
	rejectedCode      = -32005
)

// sentKey marks a call's context with the flag sentTransport sets when
// a request of the call goes out.
type sentKey struct{}

// sentTransport records that a call's request was handed to the network:
// any round trip but one whose connection could not be made (coachd down
// or restarting), which sent nothing.
type sentTransport struct{ next http.RoundTripper }

func (t sentTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err == nil && resp.StatusCode >= 400 && resp.StatusCode < 500 {
		// coachd refused the request before it read a JSON-RPC message
		// (a key revoked, a body too large…): nothing ran.
		if refused := refusal(resp); refused != nil {
			return nil, refused
		}
		return resp, nil
	}
	sent, ok := r.Context().Value(sentKey{}).(*atomic.Bool)
	if err == nil && !ok && (resp.StatusCode == http.StatusBadGateway || resp.StatusCode == http.StatusServiceUnavailable) {
		// A proxy in front of a coachd that is not up (or coachd not
		// ready), on a request that is not a call: waited for as for a
		// coachd that does not listen.
		resp.Body.Close()
		return nil, unavailableError(resp.Status)
	}
	var op *net.OpError
	if ok && !(errors.As(err, &op) && op.Op == "dial") {
		sent.Store(true)
	}
	return resp, err
}

// refusedError is coachd's refusal of a request before any JSON-RPC
// message of it was read: its status and the API's error body.
type refusedError struct {
	Status  int
	Code    string // the API's error code (unauthorized, too_large…)
	Message string
}

func (e *refusedError) Error() string {
	return fmt.Sprintf("coachd refused the request (%d %s): %s", e.Status, e.Code, e.Message)
}

// refusal reads resp's body as the API's error ({"error": {code,
// message}}) and returns it, the body closed; an answer of another shape
// (a JSON-RPC error, which the SDK reads) is left to be read whole.
func refusal(resp *http.Response) *refusedError {
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	// What was read is put back before the rest, for the SDK.
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), resp.Body), resp.Body}
	var e struct {
		JSONRPC string `json:"jsonrpc"`
		Error   struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err != nil || json.Unmarshal(body, &e) != nil || e.JSONRPC != "" || e.Error.Code == "" {
		return nil
	}
	resp.Body.Close()
	return &refusedError{Status: resp.StatusCode, Code: e.Error.Code, Message: coachd.UpstreamText(e.Error.Message, coachd.MaxUpstreamText)}
}

func (r *remote) close() {
	r.mu.Lock()
	sess := r.sess
	r.sess, r.closed = nil, true
	r.mu.Unlock()
	if sess != nil {
		sess.Close()
	}
}

package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bridge serves, over t (stdio for `coachd mcp`), the MCP server a
// running coachd serves at endpoint (…/v1/mcp), authenticated with a
// user's key: one implementation of the tools (the server's), two
// transports. The remote tool list is read at start; each call is
// forwarded with its arguments and _meta.
func Bridge(ctx context.Context, endpoint, key string, t sdk.Transport, hc *http.Client) error {
	if hc == nil {
		hc = &http.Client{}
	}
	h := *hc
	rt := h.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	h.Transport = headerTransport{h: http.Header{"Authorization": {"Bearer " + key}}, next: rt}
	// The transport adds the key at every hop: a redirect would carry it
	// to wherever it points.
	h.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
		return fmt.Errorf("the server answers with a redirect to %s: use that URL (the key is not sent to where a redirect points)", req.URL.Redacted())
	}
	r := &remote{endpoint: endpoint, hc: &h}
	sess, err := r.session(ctx)
	if err != nil {
		return err
	}
	defer r.close()
	srv := sdk.NewServer(&sdk.Implementation{Name: "coachd", Version: "1"}, nil)
	n := 0
	for tool, err := range sess.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("list tools: %w", err)
		}
		if m, ok := tool.InputSchema.(map[string]any); !ok || m["type"] != "object" {
			continue
		}
		name := tool.Name
		srv.AddTool(tool, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return r.call(ctx, &sdk.CallToolParams{Meta: req.Params.Meta, Name: name, Arguments: req.Params.Arguments})
		})
		n++
	}
	if n == 0 {
		return errors.New("the server offers no tools")
	}
	return srv.Run(ctx, t)
}

// remote is the client side of the bridge; a broken connection is opened
// again once per call.
type remote struct {
	endpoint string
	hc       *http.Client
	mu       sync.Mutex
	sess     *sdk.ClientSession
}

func (r *remote) session(ctx context.Context) (*sdk.ClientSession, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sess != nil {
		return r.sess, nil
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "coachd-mcp", Version: "1"}, &sdk.ClientOptions{Capabilities: &sdk.ClientCapabilities{}})
	sess, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: r.endpoint, HTTPClient: r.hc, DisableStandaloneSSE: true}, nil)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", r.endpoint, err)
	}
	r.sess = sess
	return sess, nil
}

func (r *remote) call(ctx context.Context, p *sdk.CallToolParams) (*sdk.CallToolResult, error) {
	sess, err := r.session(ctx)
	if err == nil {
		var res *sdk.CallToolResult
		if res, err = sess.CallTool(ctx, p); err == nil {
			return res, nil
		}
	}
	if ctx.Err() == nil && (errors.Is(err, sdk.ErrConnectionClosed) || strings.Contains(err.Error(), "connection closed")) {
		r.mu.Lock()
		if r.sess == sess {
			r.sess = nil
		}
		r.mu.Unlock()
		if sess, err = r.session(ctx); err == nil {
			return sess.CallTool(ctx, p)
		}
	}
	return nil, err
}

func (r *remote) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sess != nil {
		r.sess.Close()
	}
}

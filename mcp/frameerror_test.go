package mcp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestFrameErrorTyped: a server's own error that quotes the SDK's words
// for an oversized frame (it relays another MCP server's failure) is the
// server's answer: the model reads it, and the healthy connection is
// kept. The frame error was recognised by its text: the call read "the
// MCP server's answer is larger than 16777216 bytes" and the server was
// started again.
func TestFrameErrorTyped(t *testing.T) {
	relayed := "upstream: inbound JSON-RPC frame exceeded the configured maximum line length"
	srv := sdk.NewServer(&sdk.Implementation{Name: "relay", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "fetch", Description: "Relays.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return nil, errors.New(relayed)
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		&sdk.StreamableHTTPOptions{JSONResponse: true}))
	t.Cleanup(ts.Close)
	s := mustServer(t, &Config{Name: "relay", Prefix: "relay", URL: ts.URL, Timeout: 10 * time.Second, MaxOutput: 4096},
		Options{Backoff: Backoff{Base: time.Millisecond, Max: time.Millisecond}})
	fetch := mustTool(t, s, "relay__fetch")
	for range 2 {
		if res := call(t, fetch, `{}`); !res.IsError || !strings.Contains(res.Content, relayed) {
			t.Fatalf("result = %v %q; want the server's own error", res.IsError, res.Content)
		}
	}
	if got := s.Starts(); got != 1 {
		t.Fatalf("the server was started %d times; want 1 (its answers were errors, its connection sound)", got)
	}
}

package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHTTPResponseCapped: an HTTP server that answers a call with a plain
// JSON body (not an event stream) larger than a stdio frame may be
// (sdk.DefaultMaxLineLength) is refused as stdio's would be, instead of
// being read whole into memory, whatever its size, and then cut to
// max_output.
func TestHTTPResponseCapped(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "big", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "big", Description: "A 20 MB answer.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat("x", 20<<20)}}}, nil
		})
	srv.AddTool(&sdk.Tool{Name: "small", Description: "A small answer.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "small"}}}, nil
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		&sdk.StreamableHTTPOptions{JSONResponse: true}))
	t.Cleanup(ts.Close)
	s := mustServer(t, &Config{Name: "big", Prefix: "big", URL: ts.URL, Timeout: 10 * time.Second, MaxOutput: 4096},
		Options{Backoff: Backoff{Base: time.Millisecond, Max: time.Millisecond}})
	res := call(t, mustTool(t, s, "big__big"), `{}`)
	if !res.IsError || !strings.Contains(res.Content, "larger than") {
		t.Fatalf("a 20 MB answer was read: error %v, %d bytes: %.120q", res.IsError, len(res.Content), res.Content)
	}
	// The server is usable again: what failed was one answer.
	for i := range 2 {
		if res := call(t, mustTool(t, s, "big__small"), `{}`); res.Content == "small" {
			return
		} else if i == 1 {
			t.Fatalf("after the refused answer: %+v", res)
		}
	}
}

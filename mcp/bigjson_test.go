package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
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
	for _, name := range []string{"big", "small"} {
		srv.AddTool(&sdk.Tool{Name: name, Description: "An answer.", InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: name}}}, nil
			})
	}
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{JSONResponse: true})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var req struct {
			ID     json.RawMessage
			Method string
			Params struct{ Name string }
		}
		if json.Unmarshal(body, &req) != nil || req.Method != "tools/call" || req.Params.Name != "big" {
			h.ServeHTTP(w, r)
			return
		}
		// big's answer: a whole, well-formed result whose text is 20 MB,
		// written as it goes (the SDK's server would build it in memory
		// and encode it thrice: seconds under -race).
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, req.ID)
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		for range (20 << 20) / len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return // the client stopped reading
			}
		}
		io.WriteString(w, `"}]}}`)
	}))
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

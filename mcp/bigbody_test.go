package mcp

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// upperJSON writes the SDK's answers with the media type spelled in
// capitals, which the SDK reads as JSON all the same (media types are
// case-insensitive).
type upperJSON struct{ http.ResponseWriter }

func (w upperJSON) WriteHeader(code int) {
	if ct := w.Header().Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
		w.Header().Set("Content-Type", "Application/JSON")
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w upperJSON) Write(p []byte) (int, error) {
	if ct := w.Header().Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
		w.Header().Set("Content-Type", "Application/JSON")
	}
	return w.ResponseWriter.Write(p)
}

// TestSecurityHTTPAnyBodyCapped: whatever a hostile HTTP server calls its
// answer (JSON in capitals, or an error status with any body, which the
// SDK reads whole to find a JSON-RPC error in it), coachd reads at most a
// stdio frame of it.
func TestSecurityHTTPAnyBodyCapped(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "big", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "big", Description: "A 20 MB answer.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat("x", 20<<20)}}}, nil
		})
	srv.AddTool(&sdk.Tool{Name: "refused", Description: "A 64 MB error page.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return nil, nil })
	srv.AddTool(&sdk.Tool{Name: "small", Description: "A small answer.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "small"}}}, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{JSONResponse: true})
	var written atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"tools/call"`)) && bytes.Contains(body, []byte(`"refused"`)) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusBadRequest)
			chunk := bytes.Repeat([]byte("e"), 1<<20)
			for range 64 {
				n, err := w.Write(chunk)
				written.Add(int64(n))
				if err != nil {
					return
				}
			}
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(upperJSON{w}, r)
	}))
	t.Cleanup(ts.Close)
	s := mustServer(t, &Config{Name: "big", Prefix: "big", URL: ts.URL, Timeout: 20 * time.Second, MaxOutput: 4096},
		Options{Backoff: Backoff{Base: time.Millisecond, Max: time.Millisecond}})
	t.Run("JSONInCapitals", func(t *testing.T) {
		res := call(t, mustTool(t, s, "big__big"), `{}`)
		if !res.IsError || !strings.Contains(res.Content, "larger than") {
			t.Fatalf("a 20 MB answer was read: error %v, %d bytes: %.120q", res.IsError, len(res.Content), res.Content)
		}
	})
	t.Run("ErrorStatus", func(t *testing.T) {
		res := call(t, mustTool(t, s, "big__refused"), `{}`)
		if !res.IsError {
			t.Errorf("a 64 MB error body: error %v, %d bytes: %.120q", res.IsError, len(res.Content), res.Content)
		}
		if n := written.Load(); n > 48<<20 {
			t.Errorf("the server wrote %d MB of its error body: it was read whole", n>>20)
		}
	})
	for i := range 3 {
		if res := call(t, mustTool(t, s, "big__small"), `{}`); res.Content == "small" {
			return
		} else if i == 2 {
			t.Fatalf("after the refused answers: %+v", res)
		}
	}
}

package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestBridgeNoResend: `coachd mcp` must not send a tools/call again when
// the connection broke while the call was out: the tool may have run
// (a note saved, a turn charged) and would run twice.
func TestBridgeNoResend(t *testing.T) {
	answer := func(code int, msg string) func(http.ResponseWriter, json.RawMessage) {
		return func(w http.ResponseWriter, id json.RawMessage) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`, id, code, msg)
		}
	}
	for name, tc := range map[string]struct {
		lost      bool // the answer is lost: the error must say the call may have run
		breakConn func(w http.ResponseWriter, id json.RawMessage)
	}{
		// What a JSON-RPC peer answers to a call while it shuts down.
		"ServerClosing": {true, answer(-32004, "server is closing")},
		// The server's own answer, which happens to read like a transport's.
		"ErrorText":  {false, answer(-32603, "upstream connection closed")},
		"NoResponse": {true, func(http.ResponseWriter, json.RawMessage) { panic(http.ErrAbortHandler) }},
		"HalfBody": {true, func(w http.ResponseWriter, _ json.RawMessage) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "500")
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, `{"jsonrpc":"2.0",`)
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}},
	} {
		t.Run(name, func(t *testing.T) {
			var runs, broken atomic.Int32
			h := chargeHandler(&runs)
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				if bytes.Contains(body, []byte(`"tools/call"`)) && broken.Add(1) == 1 {
					// The tool runs; the answer is lost with the connection.
					h.ServeHTTP(httptest.NewRecorder(), r)
					r.Body = io.NopCloser(bytes.NewReader(body))
					var req struct{ ID json.RawMessage }
					json.Unmarshal(body, &req)
					tc.breakConn(w, req.ID)
					return
				}
				h.ServeHTTP(w, r)
			}))
			defer ts.Close()
			sess := bridgeSession(t, ts.URL)
			res, err := sess.CallTool(context.Background(), &sdk.CallToolParams{Name: "charge", Arguments: map[string]any{}})
			if got := runs.Load(); got != 1 {
				t.Fatalf("the tool ran %d times for one call (result %+v, err %v)", got, res, err)
			}
			if err == nil {
				t.Fatalf("a call whose answer was lost succeeded: %+v", res)
			}
			if got := strings.Contains(err.Error(), "it may have run, and is not sent again"); got != tc.lost {
				t.Errorf("error %q: says the call may have run: %v, want %v", err, got, tc.lost)
			}
			// The next call (on a new connection when this one broke:
			// sent again, as it never left) runs once.
			res, err = sess.CallTool(context.Background(), &sdk.CallToolParams{Name: "charge", Arguments: map[string]any{}})
			if err != nil || res.IsError || runs.Load() != 2 {
				t.Fatalf("next call: %+v %v (runs %d)", res, err, runs.Load())
			}
		})
	}
}

// chargeHandler is a coachd's MCP endpoint, as /v1/mcp serves it, with one
// tool, charge, that counts its runs.
func chargeHandler(runs *atomic.Int32) http.Handler {
	srv := sdk.NewServer(&sdk.Implementation{Name: "coachd", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "charge", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			runs.Add(1)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "charged"}}}, nil
		})
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
}

// bridgeSession runs Bridge to url over in-memory pipes and connects a
// client to it.
func bridgeSession(t *testing.T, url string) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	ct, st := sdk.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- Bridge(ctx, url, "ck_key", st, nil, nil) }()
	sess, err := sdk.NewClient(&sdk.Implementation{Name: "desktop", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sess.Close()
		cancel()
		<-done
	})
	return sess
}

// TestBridgeCoachdDown: a call made while coachd is down (its connection
// refused) never reached it, so its error must not say the tool may have
// run; once coachd is back, the next call runs.
func TestBridgeCoachdDown(t *testing.T) {
	var runs atomic.Int32
	h := chargeHandler(&runs)
	ts := httptest.NewServer(h)
	addr := ts.Listener.Addr().String()
	sess := bridgeSession(t, ts.URL)
	ts.Close() // coachd stops

	_, err := sess.CallTool(context.Background(), &sdk.CallToolParams{Name: "charge", Arguments: map[string]any{}})
	if err == nil || strings.Contains(err.Error(), "may have run") || runs.Load() != 0 {
		t.Fatalf("call while coachd is down: %v (runs %d); want an error that does not say it may have run", err, runs.Load())
	}

	l, err := net.Listen("tcp", addr) // coachd is back, at the same address
	if err != nil {
		t.Skipf("the address was taken meanwhile: %v", err)
	}
	back := &httptest.Server{Listener: l, Config: &http.Server{Handler: h}}
	back.Start()
	defer back.Close()
	res, err := sess.CallTool(context.Background(), &sdk.CallToolParams{Name: "charge", Arguments: map[string]any{}})
	if err != nil || res.IsError || runs.Load() != 1 {
		t.Fatalf("call once coachd is back: %+v %v (runs %d)", res, err, runs.Load())
	}
}

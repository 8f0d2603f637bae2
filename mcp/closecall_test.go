package mcp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCloseEndsCallUnderWay: a server closed (a pack's reload, coachd's
// shutdown) while a tool call to it is under way ends the call at once,
// with an error that says the server was stopped. The SDK closes a
// connection only once its calls are done: Close, and the turn, waited
// for the call's whole timeout, which then read "did not answer within
// 10m0s".
func TestCloseEndsCallUnderWay(t *testing.T) {
	for _, name := range []string{"stdio", "http"} {
		t.Run(name, func(t *testing.T) {
			called := make(chan struct{}, 1)
			var cfg *Config
			var log *slog.Logger
			if name == "stdio" {
				cfg = stdioConfig(t)
				log = slog.New(logSignal{msg: "mcp server stderr", c: called})
			} else {
				cfg = callSignalConfig(t, called)
			}
			cfg.Timeout = 10 * time.Minute
			// Not mustServer: its cleanup would wait on the Close under test.
			s := NewServer(cfg, Options{StartWait: 20 * time.Second, Logger: log})
			tool := mustTool(t, s, "fake__hang")
			done := make(chan coachd.ToolResult, 1)
			go func() { done <- call(t, tool, `{}`) }()
			select {
			case <-called:
			case <-time.After(60 * time.Second):
				t.Fatal("the call did not reach the server")
			}
			closed := make(chan error, 1)
			go func() { closed <- s.Close() }()
			select {
			case res := <-done:
				if !res.IsError || !strings.Contains(res.Content, "was stopped") {
					t.Errorf("the call under way = %+v, want an error saying the server was stopped", res)
				}
			case <-time.After(60 * time.Second):
				t.Fatal("the call under way was not ended by Close: it waits for its timeout")
			}
			select {
			case <-closed:
			case <-time.After(60 * time.Second):
				t.Fatal("Close did not return: it waits for the call under way")
			}
		})
	}
}

// callSignalConfig serves a hang tool over streamable HTTP and reports
// on called each tools/call it receives. The tool ends when the test
// does: the SDK's server does not end it when the session is deleted.
func callSignalConfig(t *testing.T, called chan<- struct{}) *Config {
	t.Helper()
	end := make(chan struct{})
	srv := sdk.NewServer(&sdk.Implementation{Name: "fake", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "hang", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			select {
			case <-ctx.Done():
			case <-end:
			}
			return nil, errors.New("ended")
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"tools/call"`)) {
				select {
				case called <- struct{}{}:
				default:
				}
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(ts.CloseClientConnections) // first: a hung call holds ts.Close
	t.Cleanup(func() { close(end) })
	return &Config{Name: "remote", Prefix: "fake", URL: ts.URL, Timeout: 3 * time.Second, MaxOutput: 4096}
}

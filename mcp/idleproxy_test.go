package mcp

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// idleProxy is a reverse proxy that cuts a response nothing was written
// to for idle (nginx's proxy_read_timeout, a load balancer's idle
// timeout): an MCP server's quiet event stream is cut again and again.
// gets reports each GET it forwards.
func idleProxy(t *testing.T, target string, idle time.Duration, gets chan<- struct{}) *httptest.Server {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	rp.ErrorLog = nil
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A server may answer a POST before the proxy read its body to
		// the end; net/http must leave that body to the proxy.
		_ = http.NewResponseController(w).EnableFullDuplex()
		if r.Method != http.MethodGet {
			rp.ServeHTTP(w, r)
			return
		}
		select {
		case gets <- struct{}{}:
		default:
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		iw := &idleWriter{ResponseWriter: w, timer: time.AfterFunc(idle, cancel), idle: idle}
		defer iw.stop()
		rp.ServeHTTP(iw, r.WithContext(ctx))
	}))
	t.Cleanup(ts.Close)
	return ts
}

// idleWriter restarts its timer at each write.
type idleWriter struct {
	http.ResponseWriter
	mu    sync.Mutex
	timer *time.Timer
	idle  time.Duration
}

func (w *idleWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.timer.Reset(w.idle)
	w.mu.Unlock()
	return w.ResponseWriter.Write(p)
}

func (w *idleWriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

func (w *idleWriter) stop() {
	w.mu.Lock()
	w.timer.Stop()
	w.mu.Unlock()
}

// TestHTTPBehindIdleProxy: an HTTP MCP server behind a proxy that cuts
// idle streams keeps its session: the event stream, quiet between tool
// changes, is cut at each idle timeout and opened again. The SDK counts
// a stream that ends without a new event id as a failed attempt, and
// after 5 in a row it ended the session: every few minutes the server
// was taken as crashed ("mcp server stopped"), a call under way then
// failed, and the next turn started it again.
func TestHTTPBehindIdleProxy(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "quiet", Version: "1"},
		&sdk.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}})
	var calls atomic.Int32
	srv.AddTool(&sdk.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			calls.Add(1)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil
		})
	backend := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(backend.Close)
	gets := make(chan struct{}, 1)
	// Longer than a stream must last to be opened again at once.
	proxy := idleProxy(t, backend.URL, streamMinLife+500*time.Millisecond, gets)
	stopped := make(chan struct{}, 1)
	log := slog.New(logSignal{msg: "mcp server stopped; it is restarted on next use", c: stopped})
	s := mustServer(t, &Config{Name: "quiet", Prefix: "quiet", URL: proxy.URL, Timeout: 10 * time.Second, MaxOutput: 4096},
		Options{Logger: log})
	tool := mustTool(t, s, "quiet__echo")
	// The SDK gave up at the 6th cut; the 7th GET is past it.
	for n := 0; n < 7; {
		select {
		case <-gets:
			n++
		case <-stopped:
			t.Fatalf("the session ended after %d event streams: the proxy's idle cuts were taken for a crash", n)
		case <-time.After(60 * time.Second):
			t.Fatalf("the event stream was opened %d times, then no more", n)
		}
	}
	if res := call(t, tool, `{}`); res.IsError || !strings.HasPrefix(res.Content, "ok") {
		t.Fatalf("echo = %+v", res)
	}
	if got := s.Starts(); got != 1 {
		t.Errorf("starts = %d, want 1 (the session outlives the proxy's cuts)", got)
	}
}

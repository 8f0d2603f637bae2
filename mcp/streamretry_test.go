package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// closingStreamServer is an HTTP MCP server whose event stream ends
// each time a little after streamMinLife, between events (a server, or
// a proxy, that closes streams early); with event, each stream brings a
// notification first. Each GET is counted in gets and reported on got.
func closingStreamServer(t *testing.T, event bool, gets *atomic.Int32, got chan<- struct{}) string {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "closing", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			h.ServeHTTP(w, r)
			return
		}
		gets.Add(1)
		select {
		case got <- struct{}{}:
		default:
		}
		w.Header().Set("Content-Type", "text/event-stream")
		if event {
			fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n")
		}
		w.(http.Flusher).Flush()
		// The misbehaviour itself: the stream lasts just long enough to
		// be opened again at once.
		end := time.NewTimer(streamMinLife + 100*time.Millisecond)
		defer end.Stop()
		select {
		case <-end.C:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

const quietStreamsLog = "mcp server's event stream keeps ending without an event; it is opened again after a growing wait"

// TestHTTPStreamEndingEarlyBacksOff: an HTTP server that ends its event
// stream, without an event, each time a little after streamMinLife is
// not asked for a new stream at once for ever: after the first stream
// opened again at once (a proxy's idle cut), the next waits the
// server's backoff. coachd opened a stream a second, for as long as the
// server ran.
func TestHTTPStreamEndingEarlyBacksOff(t *testing.T) {
	var gets atomic.Int32
	url := closingStreamServer(t, false, &gets, nil)
	waiting := make(chan struct{}, 1)
	s := NewServer(&Config{Name: "closing", Prefix: "closing", URL: url, Timeout: 10 * time.Second, MaxOutput: 4096},
		Options{StartWait: 20 * time.Second, Backoff: Backoff{Base: time.Hour, Max: time.Hour},
			Logger: slog.New(logSignal{msg: quietStreamsLog, c: waiting})})
	if _, err := s.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-waiting:
	case <-time.After(60 * time.Second):
		t.Fatalf("the event stream was opened %d times in a row, each at once", gets.Load())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := gets.Load(); n != 2 {
		t.Errorf("event streams opened = %d, want 2 (the first, and one opened again at once)", n)
	}
}

// TestHTTPStreamWithEventsReopensAtOnce: a stream that brought an event
// ends the run of quiet ones: a server whose every stream carries an
// event before it ends has its stream opened again at once each time.
func TestHTTPStreamWithEventsReopensAtOnce(t *testing.T) {
	var gets atomic.Int32
	got := make(chan struct{}, 1)
	url := closingStreamServer(t, true, &gets, got)
	waiting := make(chan struct{}, 1)
	s := mustServer(t, &Config{Name: "closing", Prefix: "closing", URL: url, Timeout: 10 * time.Second, MaxOutput: 4096},
		Options{Backoff: Backoff{Base: time.Hour, Max: time.Hour}, Logger: slog.New(logSignal{msg: quietStreamsLog, c: waiting})})
	if _, err := s.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(60 * time.Second)
	for gets.Load() < 4 {
		select {
		case <-got:
		case <-waiting:
			t.Fatalf("after %d streams that each brought an event, the next waits", gets.Load())
		case <-deadline:
			t.Fatalf("the event stream was opened %d times, then no more", gets.Load())
		}
	}
}

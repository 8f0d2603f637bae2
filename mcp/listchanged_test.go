package mcp

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// logSignal is a log handler that reports each record whose message is
// msg on a channel: the moment a log line says something happened.
type logSignal struct {
	msg string
	c   chan struct{}
}

func (h logSignal) Enabled(context.Context, slog.Level) bool { return true }
func (h logSignal) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h logSignal) WithGroup(string) slog.Handler            { return h }
func (h logSignal) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		select {
		case h.c <- struct{}{}:
		default:
		}
	}
	return nil
}

// toolNames lists s's tools' names, sorted.
func toolNames(t *testing.T, s *Server) []string {
	t.Helper()
	list, err := s.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list {
		names = append(names, tool.Definition().Name)
	}
	slices.Sort(names)
	return names
}

// TestHTTPToolListChanged: an HTTP MCP server that adds a tool sends
// notifications/tools/list_changed; the next turn gets the tool. Over
// the protocol versions before 2026-07-28 (most servers deployed) the
// notification comes on the standalone SSE stream, which the client did
// not open: the tool showed only when the 5-minute cache expired.
func TestHTTPToolListChanged(t *testing.T) {
	// "" is every version the SDK's server speaks (the client picks the
	// newest, whose subscriptions/listen carries the notification).
	for _, version := range []string{"2025-06-18", "2025-11-25", ""} {
		t.Run("v"+version, func(t *testing.T) {
			opts := &sdk.ServerOptions{}
			if version != "" {
				opts.SupportedProtocolVersions = []string{version}
			}
			srv := sdk.NewServer(&sdk.Implementation{Name: "live", Version: "1"}, opts)
			handler := func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil
			}
			srv.AddTool(&sdk.Tool{Name: "first", InputSchema: map[string]any{"type": "object"}}, handler)
			ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
			t.Cleanup(ts.Close)
			changed := make(chan struct{}, 1)
			log := slog.New(logSignal{msg: "mcp server's tool list changed", c: changed})
			s := mustServer(t, &Config{Name: "live", Prefix: "live", URL: ts.URL, Timeout: 5 * time.Second, MaxOutput: 4096},
				Options{Logger: log})
			if got, want := toolNames(t, s), []string{"live__first"}; !slices.Equal(got, want) {
				t.Fatalf("tools = %v, want %v", got, want)
			}
			srv.AddTool(&sdk.Tool{Name: "second", InputSchema: map[string]any{"type": "object"}}, handler)
			select {
			case <-changed:
			case <-time.After(15 * time.Second):
				t.Fatal("the server's notifications/tools/list_changed did not reach the client")
			}
			if got, want := toolNames(t, s), []string{"live__first", "live__second"}; !slices.Equal(got, want) {
				t.Fatalf("tools on the next turn = %v, want %v", got, want)
			}
			if got := s.Starts(); got != 1 {
				t.Errorf("starts = %d, want 1 (the change is listed, not a restart)", got)
			}
		})
	}
}

// TestHTTPToolListChangedWhileListing: a change announced while a
// listing is on its way (the answer lists the tools as they were) is not
// lost when that answer lands: the next turn lists again.
func TestHTTPToolListChangedWhileListing(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "live", Version: "1"},
		&sdk.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}})
	handler := func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil
	}
	srv.AddTool(&sdk.Tool{Name: "first", InputSchema: map[string]any{"type": "object"}}, handler)
	changed := make(chan struct{}, 1)
	lists := 0
	srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			res, err := next(ctx, method, req)
			if method == "tools/list" {
				if lists++; lists == 1 {
					// The list is made; the change lands before the answer.
					srv.AddTool(&sdk.Tool{Name: "second", InputSchema: map[string]any{"type": "object"}}, handler)
					select {
					case <-changed:
					case <-time.After(15 * time.Second):
						t.Error("the server's notifications/tools/list_changed did not reach the client")
					}
				}
			}
			return res, err
		}
	})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	log := slog.New(logSignal{msg: "mcp server's tool list changed", c: changed})
	s := mustServer(t, &Config{Name: "live", Prefix: "live", URL: ts.URL, Timeout: 20 * time.Second, MaxOutput: 4096},
		Options{Logger: log})
	if got, want := toolNames(t, s), []string{"live__first"}; !slices.Equal(got, want) {
		t.Fatalf("tools = %v, want %v (the list as it was made)", got, want)
	}
	if got, want := toolNames(t, s), []string{"live__first", "live__second"}; !slices.Equal(got, want) {
		t.Fatalf("tools on the next turn = %v, want %v", got, want)
	}
}

// TestHTTPEventStreamNeverOpens: a server (or a proxy in front of it)
// that answers requests but never the GET that opens its event stream
// still serves its tools: the stream is given up after a bounded wait,
// not waited for by every start.
func TestHTTPEventStreamNeverOpens(t *testing.T) {
	srv := fakeServer()
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			<-r.Context().Done()
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	s := mustServer(t, &Config{Name: "remote", Prefix: "fake", URL: ts.URL, Timeout: 2 * time.Second, MaxOutput: 4096}, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := s.Tools(ctx); err != nil {
		t.Fatalf("tools: %v", err)
	}
	if res := call(t, mustTool(t, s, "fake__echo"), `{"text":"hi"}`); res.IsError || !strings.HasPrefix(res.Content, "echo: hi") {
		t.Fatalf("echo = %+v", res)
	}
}

// TestHTTPToolListChangedWhileStreamDown: a change the server announces
// while the event stream is down (a proxy's idle timeout ended it) is
// lost with the stream, the server keeping no events: the stream the
// client opens again must stand for a change.
func TestHTTPToolListChangedWhileStreamDown(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "live", Version: "1"},
		&sdk.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}})
	handler := func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil
	}
	srv.AddTool(&sdk.Tool{Name: "first", InputSchema: map[string]any{"type": "object"}}, handler)
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	cut, ended := make(chan struct{}), make(chan struct{})
	var gets atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			if gets.Add(1) == 1 {
				ctx, cancel := context.WithCancel(r.Context())
				go func() { <-cut; cancel() }()
				h.ServeHTTP(w, r.WithContext(ctx))
				close(ended)
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	reopened := make(chan struct{}, 1)
	log := slog.New(logSignal{msg: "mcp server's event stream opened again; its tools are listed again", c: reopened})
	s := mustServer(t, &Config{Name: "live", Prefix: "live", URL: ts.URL, Timeout: 5 * time.Second, MaxOutput: 4096},
		Options{Logger: log})
	if got, want := toolNames(t, s), []string{"live__first"}; !slices.Equal(got, want) {
		t.Fatalf("tools = %v, want %v", got, want)
	}
	close(cut)
	<-ended
	srv.AddTool(&sdk.Tool{Name: "second", InputSchema: map[string]any{"type": "object"}}, handler)
	select {
	case <-reopened:
	case <-time.After(15 * time.Second):
		t.Fatal("the event stream was not opened again")
	}
	if got, want := toolNames(t, s), []string{"live__first", "live__second"}; !slices.Equal(got, want) {
		t.Fatalf("tools on the next turn = %v, want %v", got, want)
	}
}

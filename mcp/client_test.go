package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coachd/coachd"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func mustServer(t *testing.T, cfg *Config, opts Options) *Server {
	t.Helper()
	if opts.StartWait == 0 {
		opts.StartWait = 20 * time.Second // a loaded machine may start the fake slowly
	}
	s := NewServer(cfg, opts)
	t.Cleanup(func() { s.Close() })
	return s
}

func mustTool(t *testing.T, s *Server, name string) coachd.Tool {
	t.Helper()
	list, err := s.Tools(context.Background())
	if err != nil {
		t.Fatalf("tools: %v", err)
	}
	for _, tool := range list {
		if tool.Definition().Name == name {
			return tool
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

var testEnv = coachd.ToolEnv{User: &coachd.User{ID: "usr_ada"}, Session: &coachd.Session{ID: "sess_1"}}

func call(t *testing.T, tool coachd.Tool, input string) coachd.ToolResult {
	t.Helper()
	res, err := tool.Execute(context.Background(), coachd.ToolCall{ID: "toolu_1", Name: tool.Definition().Name, Input: json.RawMessage(input)}, testEnv)
	if err != nil {
		t.Fatalf("execute: %v (a tool failure must be a result)", err)
	}
	return res
}

// TestTransports runs the same checks over stdio and streamable HTTP.
func TestTransports(t *testing.T) {
	for name, cfg := range map[string]func(testing.TB) *Config{"stdio": stdioConfig, "http": httpConfig} {
		t.Run(name, func(t *testing.T) {
			s := mustServer(t, cfg(t), Options{})
			if got := s.Starts(); got != 0 {
				t.Fatalf("started before first use: %d", got)
			}
			t.Run("List", func(t *testing.T) {
				names := toolNames(t, s)
				want := []string{"fake__crash", "fake__echo", "fake__env", "fake__fail", "fake__hang", "fake__huge", "fake__pid"}
				if !slices.Equal(names, want) {
					t.Fatalf("tools = %v, want %v (bad.name skipped)", names, want)
				}
				def := mustTool(t, s, "fake__echo").Definition()
				if def.Description != "Echo the text." || !strings.Contains(string(def.InputSchema), `"required":["text"]`) {
					t.Errorf("echo = %+v %s", def, def.InputSchema)
				}
				if s.Starts() != 1 {
					t.Errorf("starts = %d, want 1", s.Starts())
				}
			})
			t.Run("Call", func(t *testing.T) {
				res := call(t, mustTool(t, s, "fake__echo"), `{"text":"hello"}`)
				if want := "echo: hello user=usr_ada session=sess_1"; res.IsError || res.Content != want {
					t.Fatalf("result = %+v, want %q", res, want)
				}
			})
			t.Run("ToolError", func(t *testing.T) {
				res := call(t, mustTool(t, s, "fake__fail"), `{}`)
				if !res.IsError || res.Content != "the widget is broken" {
					t.Fatalf("result = %+v", res)
				}
			})
			t.Run("Hung", func(t *testing.T) {
				s.cfg.Timeout = 300 * time.Millisecond
				defer func() { s.cfg.Timeout = 3 * time.Second }()
				start := time.Now()
				res := call(t, mustTool(t, s, "fake__hang"), `{}`)
				if !res.IsError || !strings.Contains(res.Content, "did not answer within") {
					t.Fatalf("result = %+v", res)
				}
				if d := time.Since(start); d > 2*time.Second {
					t.Errorf("a hung call took %s with a 300ms timeout", d)
				}
				s.cfg.Timeout = 3 * time.Second
				if res := call(t, mustTool(t, s, "fake__echo"), `{"text":"after"}`); res.IsError {
					t.Errorf("after a timeout: %+v", res)
				}
			})
			t.Run("Huge", func(t *testing.T) {
				res := call(t, mustTool(t, s, "fake__huge"), `{}`)
				if res.IsError || len(res.Content) > 4096 || !strings.Contains(res.Content, "[truncated: the result was 200000 bytes") {
					t.Fatalf("result: %d bytes, error %v, ends %q", len(res.Content), res.IsError, res.Content[max(0, len(res.Content)-80):])
				}
				if !strings.HasPrefix(res.Content, "éé") || !utf8Valid(res.Content) {
					t.Errorf("capped result is not valid text")
				}
			})
		})
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "?") == s }

// TestStdioEnv: a stdio server gets its file's env and what a program
// needs, never coachd's own environment.
func TestStdioEnv(t *testing.T) {
	t.Setenv("COACHD_TEST_SECRET", "s3cret")
	s := mustServer(t, stdioConfig(t), Options{})
	res := call(t, mustTool(t, s, "fake__env"), `{}`)
	if res.Content != "token=tok-123 secret=" {
		t.Fatalf("env = %q", res.Content)
	}
}

// TestCrashRestart: a server that dies is started again, after the
// backoff, on the next call; Close stops it for good.
func TestCrashRestart(t *testing.T) {
	s := mustServer(t, stdioConfig(t), Options{Backoff: Backoff{Base: 200 * time.Millisecond, Max: time.Second}})
	crash := mustTool(t, s, "fake__crash")
	res := call(t, crash, `{}`)
	if !res.IsError {
		t.Fatalf("crash result = %+v", res)
	}
	start := time.Now()
	res = call(t, mustTool(t, s, "fake__echo"), `{"text":"again"}`)
	if res.IsError || !strings.HasPrefix(res.Content, "echo: again") {
		t.Fatalf("after the crash: %+v", res)
	}
	if s.Starts() != 2 {
		t.Errorf("starts = %d, want 2", s.Starts())
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Errorf("restarted after %s: the backoff (200ms) was not waited", d)
	}
	// The old tool value works too: it belongs to the server, not a process.
	if res := call(t, crash, `{}`); !res.IsError {
		t.Fatalf("second crash = %+v", res)
	}
	s.Close()
	if res := call(t, mustToolAfterClose(s), `{"text":"x"}`); !res.IsError || !strings.Contains(res.Content, "shut down") {
		t.Errorf("after Close: %+v", res)
	}
}

func mustToolAfterClose(s *Server) coachd.Tool {
	return &Tool{srv: s, remote: "echo", def: coachd.ToolDef{Name: "fake__echo"}}
}

// TestStartFailureBackoff: a command that cannot start fails each use,
// and the waits between attempts double up to the cap.
func TestStartFailureBackoff(t *testing.T) {
	cfg := stdioConfig(t)
	cfg.Command = "./no-such-server"
	s := mustServer(t, cfg, Options{Backoff: Backoff{Base: time.Second, Max: 3 * time.Second}})
	if _, err := s.Tools(context.Background()); err == nil {
		t.Fatal("a missing command started")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := s.Tools(ctx)
	if err == nil || !strings.Contains(err.Error(), "restarting") {
		t.Fatalf("within the backoff: %v", err)
	}
	b := Backoff{Base: 250 * time.Millisecond, Max: 30 * time.Second}
	var got []time.Duration
	for n := 1; n <= 10; n++ {
		got = append(got, b.delay(n))
	}
	want := []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second,
		8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second, 30 * time.Second}
	if !slices.Equal(got, want) {
		t.Errorf("delays = %v, want %v", got, want)
	}
}

// TestAllowDeny: the file's lists filter the server's own names.
func TestAllowDeny(t *testing.T) {
	cfg := stdioConfig(t)
	cfg.Allow, cfg.Deny = []string{"e*", "fail"}, []string{"env"}
	s := mustServer(t, cfg, Options{})
	names := toolNames(t, s)
	if want := []string{"fake__echo", "fake__fail"}; !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}
}

// TestHTTPServerRestart: a streamable HTTP server that restarted (its
// sessions gone) is connected to again; at most one call fails.
func TestHTTPServerRestart(t *testing.T) {
	var mu sync.Mutex
	newHandler := func() http.Handler {
		srv := fakeServer()
		return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	}
	h := newHandler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		cur := h
		mu.Unlock()
		cur.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close) // after the client closes its event stream (Cleanups run last first)
	s := mustServer(t, &Config{Name: "remote", Prefix: "fake", URL: ts.URL, Timeout: 3 * time.Second, MaxOutput: 4096},
		Options{Backoff: Backoff{Base: 10 * time.Millisecond, Max: 100 * time.Millisecond}})
	echo := mustTool(t, s, "fake__echo")
	if res := call(t, echo, `{"text":"one"}`); res.IsError {
		t.Fatalf("first call: %+v", res)
	}
	mu.Lock()
	h = newHandler() // the server restarted: it knows no session
	mu.Unlock()
	failed := 0
	for range 2 {
		if res := call(t, echo, `{"text":"two"}`); res.IsError {
			failed++
		}
	}
	if res := call(t, echo, `{"text":"three"}`); res.IsError || failed > 1 {
		t.Fatalf("after the restart: %+v (%d failed)", res, failed)
	}
	if s.Starts() != 2 {
		t.Errorf("starts = %d, want 2", s.Starts())
	}
}

package mcp

import (
	"context"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// logErrs reports the err attribute of each record whose message is msg.
type logErrs struct {
	msg string
	c   chan string
}

func (h logErrs) Enabled(context.Context, slog.Level) bool { return true }
func (h logErrs) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h logErrs) WithGroup(string) slog.Handler            { return h }
func (h logErrs) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		var err string
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "err" {
				err = a.Value.String()
			}
			return true
		})
		select {
		case h.c <- err:
		default:
		}
	}
	return nil
}

// TestStdioServerFloodsUnreadRequests: a stdio server that sends
// requests (pings) without end and reads none of their answers is
// stopped once coachd holds maxAnswering of them. The SDK answered each
// in a goroutine of its own, blocked for good on the full pipe: coachd
// grew by thousands of goroutines and tens of MB a second, without end.
func TestStdioServerFloodsUnreadRequests(t *testing.T) {
	cfg := &Config{Name: "raw", Prefix: "raw", Command: os.Args[0], Dir: t.TempDir(),
		Env: map[string]string{fakeEnv: "raw", rawEnv: "pingdeaf"}, Timeout: 10 * time.Second, MaxOutput: 4096}
	stopped := make(chan string, 1)
	s := mustServer(t, cfg, Options{Logger: slog.New(logErrs{msg: "mcp server stopped; it is restarted on next use", c: stopped})})
	base := runtime.NumGoroutine()
	if _, err := s.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case err := <-stopped:
			if !strings.Contains(err, "requests without reading their answers") {
				t.Fatalf("stopped for %q, want the unread requests named", err)
			}
			return
		case <-tick.C:
			if n := runtime.NumGoroutine() - base; n > 5000 {
				t.Fatalf("coachd holds %d more goroutines answering a server that reads nothing", n)
			}
		case <-deadline:
			t.Fatalf("the server flooding unread requests was not stopped; %d goroutines", runtime.NumGoroutine())
		}
	}
}

// TestStdioServerDeafToAnswersCloses: a stdio server that sent requests
// and reads none of the answers does not hold up Close (a pack's reload,
// coachd's shutdown). The SDK closes the connection once the requests it
// answers are done, and an answer's write to the full pipe waited for
// good: Close never returned.
func TestStdioServerDeafToAnswersCloses(t *testing.T) {
	cfg := &Config{Name: "raw", Prefix: "raw", Command: os.Args[0], Dir: t.TempDir(),
		Env: map[string]string{fakeEnv: "raw", rawEnv: "deaf"}, Timeout: 2 * time.Second, MaxOutput: 4096}
	sent := make(chan struct{}, 1)
	// Not mustServer: its cleanup would wait on the Close under test.
	s := NewServer(cfg, Options{StartWait: 20 * time.Second, Logger: slog.New(logSignal{msg: "mcp server stderr", c: sent})})
	if _, err := s.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sent:
	case <-time.After(60 * time.Second):
		t.Fatal("the server did not send its pings")
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("close: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Close did not return: it waits on answers the server never reads")
	}
}

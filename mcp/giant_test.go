package mcp

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestStdioAnswerTooLarge: a stdio server's answer larger than a frame
// may be fails that call with the size named, and the next call starts
// the server again at once. The connection, whose reading had ended,
// was kept: the next call waited for the server's termination and
// failed too ("client is closing").
func TestStdioAnswerTooLarge(t *testing.T) {
	cfg := &Config{Name: "raw", Prefix: "raw", Command: os.Args[0], Dir: t.TempDir(),
		Env: map[string]string{fakeEnv: "raw", rawEnv: "giant"}, Timeout: 10 * time.Second, MaxOutput: 4096}
	s := mustServer(t, cfg, Options{Backoff: Backoff{Base: time.Millisecond, Max: time.Millisecond}})
	tool := mustTool(t, s, "raw__echo")
	if res := call(t, tool, `{"giant":true}`); !res.IsError || !strings.Contains(res.Content, "larger than") {
		t.Fatalf("a 20 MB answer = %v, %.200q; want an error naming its size", res.IsError, res.Content)
	}
	if res := call(t, tool, `{}`); res.IsError || res.Content != "ok" {
		t.Fatalf("the call after the refused answer = %v, %.200q; want ok", res.IsError, res.Content)
	}
}

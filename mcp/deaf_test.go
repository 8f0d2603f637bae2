package mcp

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// deafEnv, set, makes the fake stdio server stop reading its stdin once
// it has listed its tools: a single-threaded server busy on something
// else, or a hung one.
const deafEnv = "COACHD_MCP_FAKE_DEAF"

// deafStdin is stdin up to the tools/list request, then nothing: the
// rest is never read, so the pipe fills and the client's writes block.
func deafStdin() io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		in := bufio.NewReader(os.Stdin)
		for {
			line, err := in.ReadBytes('\n')
			if err != nil {
				pw.CloseWithError(err)
				return
			}
			pw.Write(line)
			if bytes.Contains(line, []byte(`"tools/list"`)) {
				select {} // deaf from now on
			}
		}
	}()
	return pr
}

// TestDeafServerCallTimesOut: a call whose request is larger than the
// pipe's buffer (a long text the model wrote) to a server that stopped
// reading its stdin blocked in the SDK's write, which does not heed the
// call's context: the call, and every later call to that server queued
// behind its write lock, never returned, whatever the timeout. Now the
// write is cut when the call's time is up (the server's connection is
// closed), the model reads that the tool did not answer, and the next
// call starts the server again.
func TestDeafServerCallTimesOut(t *testing.T) {
	cfg := stdioConfig(t)
	cfg.Env[deafEnv] = "1"
	cfg.Timeout = time.Second
	// Not mustServer: its cleanup's Close would wait for a call blocked
	// for good, and hold the test binary until its own timeout.
	s := NewServer(cfg, Options{StartWait: 20 * time.Second, Backoff: Backoff{Base: time.Millisecond, Max: time.Millisecond}})
	blocked := false
	t.Cleanup(func() {
		if !blocked {
			s.Close()
		}
	})
	echo := mustTool(t, s, "fake__echo")
	done := make(chan struct{})
	go func() {
		defer close(done)
		res := call(t, echo, `{"text":"`+strings.Repeat("x", 1<<20)+`"}`)
		if !res.IsError || !strings.Contains(res.Content, "did not answer") {
			t.Errorf("a call the server never read: %+v", res)
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		blocked = true
		t.Fatal("a call whose request the server never read did not return 30 s after its 1 s timeout")
	}
	delete(cfg.Env, deafEnv) // the next start hears again
	if res := call(t, echo, `{"text":"again"}`); res.IsError || !strings.HasPrefix(res.Content, "echo: again") {
		t.Fatalf("the call after: %+v", res)
	}
}

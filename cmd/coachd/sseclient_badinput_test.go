package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSSEClientSlowHeaders: the SSE-client table's rows that only the
// binary's own http.Server shows (issue 18; the rest is server's
// TestSSEClientBadInput). Clients sending a stream request's headers one
// byte a second are dropped once --header-timeout has passed, however
// many there are, and a header past 64 KiB is answered 431.
//
//	go test ./cmd/coachd -run SSEClientSlowHeaders -v
func TestSSEClientSlowHeaders(t *testing.T) {
	const timeout = 2 * time.Second
	p := MustServe(t, nil, "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "coachd.db"),
		"--header-timeout", timeout.String())
	addr := strings.TrimPrefix(p.url, "http://")
	head := "GET /v1/sessions/sess_x/stream HTTP/1.1\r\nHost: coachd\r\nAccept: text/event-stream\r\n\r\n"

	t.Run("OneByteASecond", func(t *testing.T) {
		const clients = 20
		var wg sync.WaitGroup
		results := make(chan string, clients)
		for range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results <- trickle(addr, head, timeout)
			}()
		}
		wg.Wait()
		close(results)
		for r := range results {
			if r != "" {
				t.Error(r)
			}
		}
	})

	t.Run("HeaderPast64KiB", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		req := "GET /v1/sessions/sess_x/stream HTTP/1.1\r\nHost: coachd\r\nLast-Event-ID: " + strings.Repeat("9", 100<<10) + "\r\n\r\n"
		go io.WriteString(c, req) // the server may answer before reading it all
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Fatalf("status %d, want 431", resp.StatusCode)
		}
	})

	t.Run("FlagsChecked", func(t *testing.T) {
		for _, args := range [][]string{{"--header-timeout", "0"}, {"--max-streams-per-user", "-7"}} {
			var stderr bytes.Buffer
			err := run(context.Background(), append([]string{"coachd", "serve", "--db", filepath.Join(t.TempDir(), "x.db")}, args...),
				getenvFrom(nil), io.Discard, &stderr)
			if !errors.Is(err, errUsage) || !strings.Contains(stderr.String(), args[0]) {
				t.Errorf("serve %v: %v, stderr %q; want it refused, naming the flag", args, err, stderr.String())
			}
		}
	})

	t.Run("ServedAfterwards", func(t *testing.T) {
		resp, err := http.Get(p.url + "/healthz")
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("healthz after the slow clients: %v %v", resp, err)
		}
		resp.Body.Close()
	})
}

// trickle sends head one byte a second on a new connection and reports
// ("" when fine) whether the server dropped it between timeout and
// timeout + 1.5 s after the first byte, having read only a few bytes.
func trickle(addr, head string, timeout time.Duration) string {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err.Error()
	}
	defer c.Close()
	closed := make(chan time.Time, 1)
	go func() {
		// The server answers nothing (or a 408) and closes: the read ends.
		_, _ = io.Copy(io.Discard, c)
		closed <- time.Now()
	}()
	start := time.Now()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	sent := 0
	for sent < len(head) {
		if _, err := c.Write([]byte{head[sent]}); err != nil {
			break // the server is gone: the write fails once it closed
		}
		sent++
		select {
		case end := <-closed:
			return check(end.Sub(start), timeout, sent)
		case <-tick.C:
		}
	}
	select {
	case end := <-closed:
		return check(end.Sub(start), timeout, sent)
	case <-time.After(timeout + 5*time.Second):
		return "all headers sent and the connection still open"
	}
}

func check(took, timeout time.Duration, sent int) string {
	if took < timeout-100*time.Millisecond || took > timeout+1500*time.Millisecond {
		return "dropped after " + took.String() + ", want about " + timeout.String()
	}
	if sent > int(timeout/time.Second)+2 {
		return "the server read too many bytes before dropping the client"
	}
	return ""
}

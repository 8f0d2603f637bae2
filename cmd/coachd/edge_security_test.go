package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The limits coachd serve puts on slow and numerous clients: issue 20
// finding 3.

// dialServed opens a connection to p, sends GET /healthz on it and returns
// it with its reader; it is closed when the test ends.
func dialServed(t *testing.T, p *program) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(p.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: coachd\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	return c, bufio.NewReader(c)
}

// answer reads one response from c within limit and returns its status.
func answer(c net.Conn, br *bufio.Reader, limit time.Duration) (int, error) {
	_ = c.SetReadDeadline(time.Now().Add(limit))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// TestSecurityMaxConns: issue 20 finding 3. With --max-conns 2, two open
// connections are served, a third waits unserved until one of them
// closes, then it is served.
func TestSecurityMaxConns(t *testing.T) {
	p := MustServe(t, nil, "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "coachd.db"), "--max-conns", "2")
	// MustServe's readiness probe leaves a kept-alive connection: let it go.
	http.DefaultClient.CloseIdleConnections()

	var open []net.Conn
	for i := range 2 {
		c, br := dialServed(t, p)
		if status, err := answer(c, br, 10*time.Second); status != http.StatusOK {
			t.Fatalf("connection %d: %d, %v", i+1, status, err)
		}
		open = append(open, c) // kept alive: it holds its slot
	}
	c, br := dialServed(t, p)
	if status, err := answer(c, br, 500*time.Millisecond); err == nil {
		t.Fatalf("a third connection was served (%d) while 2 were open with --max-conns 2", status)
	}
	open[0].Close()
	if status, err := answer(c, br, 10*time.Second); status != http.StatusOK {
		t.Fatalf("the third connection once a slot freed: %d, %v", status, err)
	}
}

// TestSecurityServeBodyTimeout: issue 20 finding 3. --body-timeout cuts a
// body that stops arriving: 400, and the connection is closed.
func TestSecurityServeBodyTimeout(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "coachd.db")
	key := mustCreateUser(t, dbPath, "erin")
	p := MustServe(t, nil, "--addr", "127.0.0.1:0", "--db", dbPath, "--body-timeout", "300ms")
	c, err := net.Dial("tcp", strings.TrimPrefix(p.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "POST /v1/notes HTTP/1.1\r\nHost: coachd\r\nAuthorization: Bearer "+key+
		"\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	if status, err := answer(c, br, 10*time.Second); status != http.StatusBadRequest {
		t.Fatalf("a body that stopped: %d, %v; want 400 after the body timeout", status, err)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("connection still open after the body timeout: %v", err)
	}
}

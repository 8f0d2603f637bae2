package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/server"
)

// sseGet is a raw GET of a session stream with extra header lines.
func sseGet(path, key string, extra ...string) string {
	h := "GET " + path + " HTTP/1.1\r\nHost: coachd\r\n"
	if key != "" {
		h += "Authorization: Bearer " + key + "\r\n"
	}
	for _, x := range extra {
		h += x + "\r\n"
	}
	return h + "\r\n"
}

// openStream sends req on a new raw connection and reads the response
// head; the body (the stream) is left to the caller.
func openStream(t *testing.T, e *chatEnv, req string) (net.Conn, *http.Response, *bufio.Reader) {
	t.Helper()
	c := e.rawConn(t)
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no response: %v", err)
	}
	_ = c.SetReadDeadline(time.Time{})
	return c, resp, bufio.NewReader(resp.Body)
}

// errorOf reads an error answer's code, from its JSON body or its SSE
// error event.
func errorOf(t *testing.T, resp *http.Response, body []byte) string {
	t.Helper()
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
		Type  string                         `json:"type"` // the coachd dialect's error event
	}
	raw := body
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for _, line := range strings.Split(string(body), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				raw = []byte(d)
			}
		}
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatalf("error body is not JSON: %q", body)
	}
	if e.Error.Code != "" {
		return e.Error.Code
	}
	return e.Type
}

// TestSSEClientBadInput is the SSE-client surface's bad-input table
// (issue 18): raw net.Conn clients of the real server's stream endpoints
// (GET /v1/sessions/{id}/stream, POST /v1/chat/stream) sending what a
// broken or hostile client sends. Each row is answered with its status and
// error code, or streams as it should; the rows that hold connections
// (many streams, a client that never reads, one that leaves mid-event)
// prove the server lets them go. Slow headers are the binary's
// (cmd/coachd TestSSEClientSlowHeaders), as is the 64 KiB header cap.
//
//	go test ./server -run SSEClientBadInput -v
func TestSSEClientBadInput(t *testing.T) {
	// No stream cap here: a stream whose client closed may stay counted
	// for up to a second (a parked stream's prober notices), and the rows
	// open many. ManyStreamsOneUser has a cap of its own.
	e := mustEdgeEnv(t, func(d *server.Deps) { d.WriteTimeout = 200 * time.Millisecond })
	ctx := context.Background()
	sess, err := e.alice.c.CreateSession(ctx, "", "")
	if err != nil {
		t.Fatal(err)
	}
	path := "/v1/sessions/" + sess.ID + "/stream"
	type row struct {
		name   string
		req    string
		status int
		code   string // the error code wanted; "" wants the stream
	}
	rows := []row{
		{"LastEventIDGarbage", sseGet(path, e.alice.key, "Last-Event-ID: abc"), 400, coachd.EINVALID},
		{"LastEventIDHuge", sseGet(path, e.alice.key, "Last-Event-ID: 99999999999999999999:1"), 400, coachd.EINVALID},
		{"LastEventIDNegative", sseGet(path, e.alice.key, "Last-Event-ID: -1:-5"), 400, coachd.EINVALID},
		{"LastEventIDNoSeq", sseGet(path, e.alice.key, "Last-Event-ID: 7"), 400, coachd.EINVALID},
		{"LastEventIDInvalidUTF8", sseGet(path, e.alice.key, "Last-Event-ID: \xff\xfe:1"), 400, coachd.EINVALID},
		{"LastEventIDHugeValue", sseGet(path, e.alice.key, "Last-Event-ID: "+strings.Repeat("9", 100_000)), 400, coachd.EINVALID},
		{"LastEventIDQueryNUL", sseGet(path+"?last_event_id=%00%FF", e.alice.key), 400, coachd.EINVALID},
		{"LastEventIDFutureTurn", sseGet(path, e.alice.key, "Last-Event-ID: 999999:0"), 400, coachd.EINVALID},
		{"WrongAcceptJSON", sseGet(path, e.alice.key, "Accept: application/json"), 200, ""},
		{"WrongAcceptJSONOnError", sseGet(path, e.alice.key, "Accept: application/json", "Last-Event-ID: x"), 400, coachd.EINVALID},
		{"AcceptHTML", sseGet(path, e.alice.key, "Accept: text/html;q=abc, */*;;"), 200, ""},
		{"AcceptControlBytes", sseGet(path, e.alice.key, "Accept: \x7f\x01"), 400, ""}, // net/http refuses it
		{"ProtocolUnknown", sseGet(path+"?protocol=websocket", e.alice.key), 400, coachd.EINVALID},
		{"NoAuth", sseGet(path, ""), 401, coachd.EUNAUTHORIZED},
		{"TokenGarbage", sseGet(path+"?token=%00%FF"+strings.Repeat("x", 10_000), ""), 401, coachd.EUNAUTHORIZED},
		{"OtherUsersSession", sseGet(path, e.bob.key), 404, coachd.ENOTFOUND},
		{"SessionIDTraversal", sseGet("/v1/sessions/..%2F..%2Fetc%2Fpasswd/stream", e.alice.key), 404, coachd.ENOTFOUND},
		{"BodyOnGET", "GET " + path + " HTTP/1.1\r\nHost: coachd\r\nAuthorization: Bearer " + e.alice.key +
			"\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"a\":\"b\"}\r\n", 400, coachd.EINVALID},
		{"BodyOnGETNeverSent", "GET " + path + " HTTP/1.1\r\nHost: coachd\r\nAuthorization: Bearer " + e.alice.key +
			"\r\nContent-Length: 1000000000\r\n\r\n", 400, coachd.EINVALID},
		{"ChunkedBodyOnGET", "GET " + path + " HTTP/1.1\r\nHost: coachd\r\nAuthorization: Bearer " + e.alice.key +
			"\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n", 400, coachd.EINVALID},
		{"HTTP10", "GET " + path + " HTTP/1.0\r\nAuthorization: Bearer " + e.alice.key + "\r\n\r\n", 200, ""},
		{"NULInHeader", sseGet(path, e.alice.key, "X-Thing: a\x00b"), 400, ""},
		{"ChatStreamWrongContentType", "POST /v1/chat/stream HTTP/1.1\r\nHost: coachd\r\nAuthorization: Bearer " + e.alice.key +
			"\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi", 415, coachd.EUNSUPPORTED},
		{"ChatStreamDeepJSON", chatReq(e.alice.key, `{"message":`+strings.Repeat("[", 100_000)+strings.Repeat("]", 100_000)+`}`), 400, coachd.EINVALID},
		{"ChatStreamInvalidUTF8", chatReq(e.alice.key, "{\"message\":\"\xff\xfe\"}"), 400, coachd.EINVALID},
		{"ChatStreamNUL", chatReq(e.alice.key, `{"message":"a\u0000b"}`), 400, coachd.EINVALID},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			c, resp, br := openStream(t, e, r.req)
			if resp.StatusCode != r.status {
				b, _ := io.ReadAll(io.LimitReader(br, 4096))
				t.Fatalf("status %d, want %d: %.300s", resp.StatusCode, r.status, b)
			}
			if r.status == 200 {
				if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
					t.Fatalf("content type %q", ct)
				}
				_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
				if line, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(line, "retry: ") {
					t.Fatalf("the stream does not open with its retry hint: %q %v", line, err)
				}
				return // the client hangs up: the server lets the stream go (ManyStreams proves it)
			}
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			body, _ := io.ReadAll(io.LimitReader(br, 64<<10))
			if r.code != "" {
				if got := errorOf(t, resp, body); got != r.code {
					t.Fatalf("code %q, want %q: %.300s", got, r.code, body)
				}
			}
		})
	}

	t.Run("ManyStreamsOneUser", func(t *testing.T) {
		// MaxStreamsPerUser is 3 here: the 4th is refused, other users are
		// not, and a stream closed gives its slot back.
		e := mustEdgeEnv(t, func(d *server.Deps) { d.WriteTimeout = 200 * time.Millisecond; d.MaxStreamsPerUser = 3 })
		sess, err := e.alice.c.CreateSession(ctx, "", "")
		if err != nil {
			t.Fatal(err)
		}
		path := "/v1/sessions/" + sess.ID + "/stream"
		var open []net.Conn
		for i := range 3 {
			c, resp, _ := openStream(t, e, sseGet(path, e.alice.key))
			if resp.StatusCode != 200 {
				t.Fatalf("stream %d: %d", i+1, resp.StatusCode)
			}
			open = append(open, c)
		}
		_, resp, br := openStream(t, e, sseGet(path, e.alice.key))
		body, _ := io.ReadAll(io.LimitReader(br, 4096))
		if resp.StatusCode != 429 || errorOf(t, resp, body) != coachd.ERATELIMITED || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("a 4th stream: %d %q", resp.StatusCode, body)
		}
		bobSess, err := e.bob.c.CreateSession(ctx, "", "")
		if err != nil {
			t.Fatal(err)
		}
		if _, resp, _ := openStream(t, e, sseGet("/v1/sessions/"+bobSess.ID+"/stream", e.bob.key)); resp.StatusCode != 200 {
			t.Fatalf("another user's stream refused: %d", resp.StatusCode)
		}
		open[0].Close()
		waitUntil(t, 5*time.Second, "a closed stream's slot", func() bool {
			c, resp, _ := openStream(t, e, sseGet(path, e.alice.key))
			if resp.StatusCode == 200 {
				open[0] = c
				return true
			}
			c.Close()
			return false
		})
		for _, c := range open {
			c.Close()
		}
	})

	t.Run("NeverReads", func(t *testing.T) {
		// A follower that reads nothing while a turn streams megabytes is
		// dropped by the write deadline: its slot (one per user here)
		// comes back while the turn goes on.
		e := mustEdgeEnv(t, func(d *server.Deps) { d.WriteTimeout = 200 * time.Millisecond; d.MaxStreamsPerUser = 1 })
		sess, err := e.alice.c.CreateSession(ctx, "", "")
		if err != nil {
			t.Fatal(err)
		}
		path := "/v1/sessions/" + sess.ID + "/stream"
		c := e.rawConn(t)
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetReadBuffer(4096)
		}
		if _, err := io.WriteString(c, sseGet(path, e.alice.key, "Last-Event-ID: 0:0")); err != nil {
			t.Fatal(err)
		}
		e.fake.Enqueue(anthropictest.Text(strings.Repeat("All work and no play makes a dull driver. ", 100_000), 4000))
		done := make(chan stream, 1)
		go func() {
			done <- e.tryChat(ctx, e.alice.key, "", fmt.Sprintf(`{"session_id":%q,"message":"tell me everything"}`, sess.ID))
		}()
		waitUntil(t, 20*time.Second, "the non-reading follower to be dropped", func() bool {
			c2, resp, _ := openStream(t, e, sseGet(path, e.alice.key))
			c2.Close()
			return resp.StatusCode == 200
		})
		if s := <-done; s.err != nil || s.status != 200 {
			t.Fatalf("the turn: %d %v", s.status, s.err)
		}
	})

	t.Run("DisconnectMidEvent", func(t *testing.T) {
		// The client reads a few bytes of the stream and leaves: the turn
		// goes on (on_disconnect continue), is stored whole, and the
		// session is free for the next turn.
		sess, err := e.alice.c.CreateSession(ctx, "", "")
		if err != nil {
			t.Fatal(err)
		}
		reply := strings.Repeat("Leave the airport by the north exit. ", 200)
		e.fake.Enqueue(anthropictest.Text(reply, 50).Paced(0, time.Millisecond))
		c, resp, br := openStream(t, e, chatReq(e.alice.key, fmt.Sprintf(`{"session_id":%q,"message":"route?"}`, sess.ID)))
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		buf := make([]byte, 10)
		if _, err := io.ReadFull(br, buf); err != nil {
			t.Fatal(err)
		}
		c.Close() // mid-event
		waitUntil(t, 20*time.Second, "the turn to end and be stored", func() bool {
			msgs, _, err := e.db.ListMessages(ctx, e.alice.ID, sess.ID, coachd.Page{Limit: 10})
			var busy int
			e.db.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM sessions WHERE id = ? AND turn_owner IS NOT NULL`, sess.ID).Scan(&busy)
			return err == nil && busy == 0 && len(msgs) == 2 && msgs[1].Content == reply && !msgs[1].Partial
		})
		e.fake.Enqueue(anthropictest.Text("Next.", 0))
		if s := e.chat(ctx, e.alice.key, "", fmt.Sprintf(`{"session_id":%q,"message":"and then?"}`, sess.ID)); s.status != 200 {
			t.Fatalf("next turn: %d %s", s.status, s.raw)
		}
	})

	t.Run("Pipelined", func(t *testing.T) {
		// Three requests in one write: answered in order, the stream last.
		c := e.rawConn(t)
		req := "GET /healthz HTTP/1.1\r\nHost: coachd\r\n\r\n" +
			"GET /v1/me HTTP/1.1\r\nHost: coachd\r\nAuthorization: Bearer " + e.alice.key + "\r\n\r\n" +
			sseGet(path, e.alice.key)
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(c)
		for i, want := range []int{200, 200, 200} {
			resp, body := readResponseHead(t, c, br)
			if resp.StatusCode != want {
				t.Fatalf("response %d: %d", i+1, resp.StatusCode)
			}
			if i == 1 && !strings.Contains(string(body), e.alice.ID) {
				t.Fatalf("GET /v1/me answered %q", body)
			}
			if i == 2 && !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				t.Fatalf("the pipelined stream: %v", resp.Header)
			}
		}
	})
}

func chatReq(key, body string) string {
	return "POST /v1/chat/stream HTTP/1.1\r\nHost: coachd\r\nAuthorization: Bearer " + key +
		"\r\nContent-Type: application/json\r\nContent-Length: " + fmt.Sprint(len(body)) + "\r\n\r\n" + body
}

// readResponseHead reads one response; a stream's body is left unread.
func readResponseHead(t *testing.T, c net.Conn, br *bufio.Reader) (*http.Response, []byte) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp, nil
	}
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}

// waitUntil polls cond until it holds, failing the test after limit.
func waitUntil(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: still waiting for %s", limit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

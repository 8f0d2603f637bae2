package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/client"
	"github.com/coachd/coachd/internal/syncbuf"
	"github.com/coachd/coachd/server"
	"github.com/coachd/coachd/tools"
)

// The HTTP edge under a hostile or broken client: issue 20 findings 3, 4,
// 8 (rate limit), 10 and 15.

// mustEdgeEnv is a chat-capable server over a SQLite file whose Deps the
// test adjusts. Its connections have small socket send buffers, so that a
// client that does not read blocks the server's writes after a few KiB.
func mustEdgeEnv(t *testing.T, adjust func(*server.Deps)) *chatEnv {
	t.Helper()
	return mustEdgeEnvOn(t, adjust, nil)
}

// mustEdgeEnvOn is mustEdgeEnv whose listener, when wrap is set, is
// wrap's (a test that watches the server's connections). Connections it
// wraps keep the system's send buffers: the small ones are set on a
// *net.TCPConn only.
func mustEdgeEnvOn(t *testing.T, adjust func(*server.Deps), wrap func(net.Listener) net.Listener) *chatEnv {
	t.Helper()
	db := mustDB(t, filepath.Join(t.TempDir(), "coachd.db"), nil)
	fake := anthropictest.NewServer()
	t.Cleanup(fake.Close)
	ts, err := agent.NewToolset(tools.Builtins()...)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncbuf.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	runner := agent.NewRunner(agent.Config{
		Store: db, Tools: ts, Logger: logger,
		Model: anthropic.New(anthropic.Config{APIKey: "test", BaseURL: fake.URL(), MaxRetries: -1, NoCache: true}),
	})
	deps := server.Deps{Store: db, Logger: logger, AdminKey: adminKey, Runner: runner, Heartbeat: time.Hour}
	if adjust != nil {
		adjust(&deps)
	}
	srv := httptest.NewUnstartedServer(server.New(deps))
	srv.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetWriteBuffer(4096)
		}
		return ctx
	}
	if wrap != nil {
		srv.Listener = wrap(srv.Listener)
	}
	srv.Start()
	t.Cleanup(srv.Close)
	e := &env{t: t, db: db, url: srv.URL, logs: logs, admin: client.New(srv.URL, adminKey, srv.Client())}
	e.alice = e.MustUser("alice")
	e.bob = e.MustUser("bob")
	return &chatEnv{env: e, fake: fake}
}

// rawConn dials the server: a client that does exactly what the test says
// and nothing more. It is closed when the test ends, before the server.
func (e *env) rawConn(t *testing.T) net.Conn {
	t.Helper()
	u, _ := url.Parse(e.url)
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// readResponse reads one response from c, failing the test if none comes
// within limit.
func readResponse(t *testing.T, c net.Conn, br *bufio.Reader, limit time.Duration) (*http.Response, []byte) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(limit))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no response within %s: %v", limit, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, body
}

// slowBodyHead is the start of a POST whose declared body never arrives in
// full: the client has sent one byte of it and pauses.
func slowBodyHead(path, key string) string {
	return "POST " + path + " HTTP/1.1\r\nHost: coachd\r\nAuthorization: Bearer " + key +
		"\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"
}

// TestSecuritySlowBodyInvalidKey: issue 20 finding 3. A client with a wrong
// key trickling its body gets its 401 at once, without the server waiting
// for the body: authentication comes first, and net/http must not read the
// rest of the body before answering. The body timeout is the default
// (30 s): what answers is the early 401, not the deadline.
func TestSecuritySlowBodyInvalidKey(t *testing.T) {
	e := MustEnv(t, filepath.Join(t.TempDir(), "coachd.db"))
	for _, path := range []string{"/v1/notes", "/v1/users"} {
		t.Run(path, func(t *testing.T) {
			c := e.rawConn(t)
			if _, err := io.WriteString(c, slowBodyHead(path, "ck_not-a-real-key")); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(c)
			resp, body := readResponse(t, c, br, 5*time.Second)
			if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), `"unauthorized"`) {
				t.Fatalf("got %d %s, want 401 unauthorized", resp.StatusCode, body)
			}
			if !resp.Close {
				t.Errorf("connection kept open after answering an unread body: %v", resp.Header)
			}
		})
	}
}

// TestSecuritySlowBodyDeadline: issue 20 finding 3. An authenticated
// client that stops sending its body is answered 400 when the body timeout
// runs out, and the connection is closed.
func TestSecuritySlowBodyDeadline(t *testing.T) {
	e := mustEdgeEnv(t, func(d *server.Deps) { d.BodyTimeout = 300 * time.Millisecond })
	c := e.rawConn(t)
	start := time.Now()
	if _, err := io.WriteString(c, slowBodyHead("/v1/notes", e.alice.key)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, body := readResponse(t, c, br, 10*time.Second)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "did not arrive in time") {
		t.Fatalf("got %d %s, want 400 naming the body timeout", resp.StatusCode, body)
	}
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Errorf("answered after %s, before the body timeout", took)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := br.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("connection still open after the body timeout: read %d, %v", n, err)
	}
}

// TestSecuritySSEClientNotReading: issue 20 finding 4. A client that sends
// a turn and never reads its stream does not keep the turn alive: the turn
// writes its events to the log, never to the client's socket, so it ends
// by itself (and once a write to the client cannot finish within the write
// timeout, the stream ends as if the client had left): the session is free
// again (no 409) and the reservation settled, long before the turn's 55 s
// max_duration.
func TestSecuritySSEClientNotReading(t *testing.T) {
	e := mustEdgeEnv(t, func(d *server.Deps) { d.WriteTimeout = 200 * time.Millisecond })
	ctx := context.Background()
	sess, err := e.alice.c.CreateSession(ctx, "", "")
	if err != nil {
		t.Fatal(err)
	}
	// Megabytes of reply: far more than socket buffers hold.
	e.fake.Enqueue(anthropictest.Text(strings.Repeat("All work and no play makes a dull driver. ", 100_000), 4000))
	e.fake.SetScript(func(*anthropictest.Request) anthropictest.Reply { return anthropictest.Text("Welcome back.", 5) })

	c := e.rawConn(t)
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4096)
	}
	body := fmt.Sprintf(`{"session_id":%q,"message":"tell me everything"}`, sess.ID)
	// on_disconnect=cancel: the turn follows its client (with continue it
	// does not wait for the client at all; TestStreamContinue).
	req := "POST /v1/chat/stream?on_disconnect=cancel HTTP/1.1\r\nHost: coachd\r\nAuthorization: Bearer " + e.alice.key +
		"\r\nContent-Type: application/json\r\nContent-Length: " + fmt.Sprint(len(body)) + "\r\n\r\n" + body
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	// The client now reads nothing. Wait for the turn to be over: its
	// lease released and its reservation settled.
	start := time.Now()
	const bound = 15 * time.Second
	for {
		var busy, active int
		row := e.db.SQL().QueryRowContext(ctx, `SELECT
			(SELECT COUNT(*) FROM sessions WHERE id = ? AND turn_owner IS NOT NULL),
			(SELECT COUNT(*) FROM reservations WHERE state = 'active')`, sess.ID)
		if err := row.Scan(&busy, &active); err != nil {
			t.Fatal(err)
		}
		if busy == 0 && active == 0 && len(e.fake.Requests()) > 0 {
			break
		}
		if time.Since(start) > bound {
			t.Fatalf("after %s the turn still runs for a client that does not read (session busy %d, active reservations %d)", bound, busy, active)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var settled int
	if err := e.db.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM reservations WHERE state IN ('aborted', 'finalized')`).Scan(&settled); err != nil || settled != 1 {
		t.Errorf("settled reservations: %d, %v; want 1", settled, err)
	}
	// The session is free: the next turn is not refused as busy (the long
	// reply may have used the budget: the turn no longer waits for its
	// client's socket, it writes to the event log and ends by itself).
	// The turn frees its slot in this process just after its end's
	// commit, which the loop above saw: on_busy=wait bridges that moment
	// (a turn still running would hold the slot past MaxBusyWait: 409).
	s := e.chat(ctx, e.alice.key, "?on_busy=wait", fmt.Sprintf(`{"session_id":%q,"message":"hello again"}`, sess.ID))
	if s.status == http.StatusConflict {
		t.Fatalf("next turn on the session: %d %s", s.status, s.raw)
	}
	msgs, _, err := e.db.ListMessages(ctx, e.alice.ID, sess.ID, coachd.Page{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) < 2 || msgs[1].Role != coachd.RoleAssistant || msgs[1].Content == "" {
		t.Errorf("the reply is not stored: %d messages", len(msgs))
	}
}

// TestSecurityQuerySemicolon: issue 20 finding 10. A query string net/url
// cannot parse whole is refused instead of silently losing the parameter
// (which listed every note unfiltered).
func TestSecurityQuerySemicolon(t *testing.T) {
	e := MustEnv(t, filepath.Join(t.TempDir(), "coachd.db"))
	e.MustNote(e.alice, "Airport")
	for _, q := range []string{"?type=zzz;", "?type=tip;category=timing", "?type=%zz"} {
		r := e.do(request{method: "GET", path: "/v1/notes" + q, key: e.alice.key})
		if r.status != http.StatusBadRequest || r.errorCode() != coachd.EINVALID || !strings.Contains(string(r.body), "malformed query string") {
			t.Errorf("GET /v1/notes%s: %d %s, want 400 invalid_request naming the query string", q, r.status, r.body)
		}
	}
	if r := e.do(request{method: "GET", path: "/v1/notes?type=tip&category=timing", key: e.alice.key}); r.status != http.StatusOK {
		t.Errorf("a well-formed query: %d %s", r.status, r.body)
	}
}

// TestSecurityNosniffOnErrors: issue 20 finding 15. Every response carries
// X-Content-Type-Options: nosniff, error responses included.
func TestSecurityNosniffOnErrors(t *testing.T) {
	e := MustEnv(t, filepath.Join(t.TempDir(), "coachd.db"))
	for _, tc := range []struct {
		name string
		req  request
		want int
	}{
		{"401", request{method: "GET", path: "/v1/me"}, 401},
		{"403", request{method: "POST", path: "/v1/users", key: e.alice.key, body: `{}`}, 403},
		{"404 route", request{method: "GET", path: "/v1/nope", key: e.alice.key}, 404},
		{"404 note", request{method: "GET", path: "/v1/notes/note_0000000000000000000000", key: e.alice.key}, 404},
		{"405", request{method: "DELETE", path: "/v1/me", key: e.alice.key}, 405},
		{"400", request{method: "GET", path: "/v1/sessions?limit=0", key: e.alice.key}, 400},
		{"415", request{method: "POST", path: "/v1/notes", key: e.alice.key, body: `{}`, header: map[string]string{"Content-Type": "text/plain"}}, 415},
		{"200", request{method: "GET", path: "/healthz"}, 200},
	} {
		r := e.do(tc.req)
		if r.status != tc.want {
			t.Errorf("%s: status %d %s", tc.name, r.status, r.body)
		}
		if got := r.header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s: X-Content-Type-Options %q, want nosniff", tc.name, got)
		}
	}
}

// TestSecurityEmptyFieldName: issue 20 finding 15. A problem that belongs
// to no single field reads as its message, not ": message".
func TestSecurityEmptyFieldName(t *testing.T) {
	e := MustEnv(t, filepath.Join(t.TempDir(), "coachd.db"))
	n := e.MustNote(e.alice, "Airport")
	for _, req := range []request{
		{method: "PUT", path: "/v1/notes/" + n.ID, key: e.alice.key, body: `{}`},
		{method: "PATCH", path: "/v1/users/" + e.alice.ID, key: adminKey, body: `{}`},
	} {
		r := e.do(req)
		var b struct {
			Error struct{ Message string } `json:"error"`
		}
		_ = json.Unmarshal(r.body, &b)
		if r.status != http.StatusBadRequest || !strings.HasPrefix(b.Error.Message, "nothing to update: ") {
			t.Errorf("%s %s: %d message %q, want it to start with \"nothing to update: \"", req.method, req.path, r.status, b.Error.Message)
		}
	}
}

// TestSecurityToolExecuteRateLimit: issue 20 finding 8 (rate-limit half).
// POST /v1/tools/execute is rate limited per user, 429 with Retry-After
// past the limit, in a bucket of its own: tool calls do not use up the
// chat turns.
func TestSecurityToolExecuteRateLimit(t *testing.T) {
	e := mustEdgeEnv(t, func(d *server.Deps) {
		d.Limits = server.Limits{Rate: coachd.RateLimit{N: 1, Per: time.Hour}, ToolRate: coachd.RateLimit{N: 3, Per: time.Hour}}
	})
	exec := request{method: "POST", path: "/v1/tools/execute", key: e.alice.key, body: `{"tool_name":"list_notes","tool_input":{}}`}
	for i := range 3 {
		if r := e.do(exec); r.status != http.StatusOK {
			t.Fatalf("call %d: %d %s", i+1, r.status, r.body)
		}
	}
	r := e.do(exec)
	if r.status != http.StatusTooManyRequests || r.errorCode() != coachd.ERATELIMITED || r.header.Get("Retry-After") == "" {
		t.Fatalf("call 4: %d %s (Retry-After %q), want 429 rate_limit_exceeded with Retry-After", r.status, r.body, r.header.Get("Retry-After"))
	}
	if r := e.do(request{method: "POST", path: "/v1/tools/execute", key: e.bob.key, body: exec.body}); r.status != http.StatusOK {
		t.Errorf("another user: %d %s", r.status, r.body)
	}
	e.fake.Enqueue(anthropictest.Text("Hello.", 3))
	if s := e.chat(context.Background(), e.alice.key, "", `{"message":"hi"}`); s.status != http.StatusOK {
		t.Errorf("a chat turn after the tool calls: %d %s", s.status, s.raw)
	}
}

package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/client"
	"github.com/coachd/coachd/internal/syncbuf"
	"github.com/coachd/coachd/server"
	"github.com/coachd/coachd/tools"
)

// mustParkEnv is MustChatEnv with a short heartbeat, an allowed CORS
// origin, and the server started by start (HTTP/1.1 or HTTP/2).
func mustParkEnv(t *testing.T, heartbeat time.Duration, start func(*httptest.Server)) (*chatEnv, *httptest.Server) {
	t.Helper()
	db := mustDB(t, filepath.Join(t.TempDir(), "coachd.db"), nil)
	fake := anthropictest.NewServer()
	ts, err := agent.NewToolset(tools.Builtins()...)
	if err != nil {
		t.Fatal(err)
	}
	ag := agent.DefaultAgent()
	logs := &syncbuf.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	runner := agent.NewRunner(agent.Config{
		Store: db, Tools: ts, Logger: logger,
		Model:  anthropic.New(anthropic.Config{APIKey: "test", BaseURL: fake.URL(), MaxRetries: -1, NoCache: true}),
		Agents: func(string) (*agent.Agent, bool) { return ag, true },
	})
	api := server.New(server.Deps{Store: db, Logger: logger, AdminKey: adminKey, Runner: runner, Heartbeat: heartbeat,
		CORSOrigins: []string{"https://app.example.com"}})
	srv := httptest.NewUnstartedServer(api)
	start(srv)
	t.Cleanup(func() {
		closeServer(api, srv)
		fake.Close()
	})
	e := &env{t: t, db: db, url: srv.URL, logs: logs, admin: client.New(srv.URL, adminKey, srv.Client())}
	e.alice = e.MustUser("alice")
	return &chatEnv{env: e, fake: fake, api: api}, srv
}

// rawStream is a session stream read line by line; end gets the error
// the body ended with (io.EOF: a complete chunked response).
type rawStream struct {
	resp  *http.Response
	lines chan string // closed at the end, then end has the error
	end   chan error
}

func openRaw(t *testing.T, hc *http.Client, url, key, lastID string) *rawStream {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Origin", "https://app.example.com")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	s := &rawStream{resp: resp, lines: make(chan string, 1000), end: make(chan error, 1)}
	go func() {
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				s.end <- err
				close(s.lines)
				return
			}
			s.lines <- strings.TrimSuffix(line, "\n")
		}
	}()
	return s
}

// until reads lines until one that has want in it; it returns them all.
func (s *rawStream) until(t *testing.T, want string) string {
	t.Helper()
	var sb strings.Builder
	timeout := time.After(10 * time.Second)
	for {
		select {
		case line, ok := <-s.lines:
			if !ok {
				t.Fatalf("the stream ended (%v) before %q:\n%s", <-s.end, want, sb.String())
			}
			sb.WriteString(line + "\n")
			if strings.Contains(line, want) {
				return sb.String()
			}
		case <-timeout:
			t.Fatalf("no %q in 10s:\n%s", want, sb.String())
		}
	}
}

// TestStreamParked: idle session streams are parked off their request
// (HTTP/1.1, the connection hijacked) in every dialect, and keep their
// behaviour: headers (CORS included), Last-Event-ID replay, heartbeats,
// the next turn's events with their ids, a client leaving noticed, and
// on Drain the server_shutdown error and a well-formed end of the
// chunked body.
func TestStreamParked(t *testing.T) {
	e, srv := mustParkEnv(t, 100*time.Millisecond, (*httptest.Server).Start)
	ctx := context.Background()
	sess := e.MustSession(e.alice)
	e.fake.Enqueue(anthropictest.Text("First turn, before anyone follows.", 4))
	if s := e.chat(ctx, e.alice.key, "", `{"message":"one","session_id":"`+sess.ID+`"}`); s.status != 200 {
		t.Fatal(s.status)
	}
	path := srv.URL + "/v1/sessions/" + sess.ID + "/stream"
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	coachdS := openRaw(t, hc, path, e.alice.key, "1:1") // the rest of turn 1, then idle
	aspS := openRaw(t, hc, path+"?protocol=asp", e.alice.key, "")
	sageS := openRaw(t, hc, path+"?protocol=sage", e.alice.key, "")
	for name, s := range map[string]*rawStream{"coachd": coachdS, "asp": aspS, "sage": sageS} {
		h := s.resp.Header
		if h.Get("Content-Type") != "text/event-stream" || h.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
			h.Get("X-Coachd-Session-Id") != sess.ID || s.resp.TransferEncoding[0] != "chunked" {
			t.Errorf("%s: headers %v, transfer encoding %v", name, h, s.resp.TransferEncoding)
		}
	}
	if replay := coachdS.until(t, "event: message_end"); textOf(mustEvents(t, replay)) != "First turn, before anyone follows." || strings.Contains(replay, "id: 1:1\n") {
		t.Errorf("replay after 1:1:\n%s", replay)
	}
	waitFor(t, func() bool { return e.api.DetachedStreams() == 3 })
	for _, s := range []*rawStream{coachdS, aspS, sageS} {
		s.until(t, ": ping") // heartbeats from the shared heart, chunked by hand
	}

	e.fake.Enqueue(anthropictest.Text("Second turn, followed by parked streams.", 4))
	if s := e.chat(ctx, e.alice.key, "", `{"message":"two","session_id":"`+sess.ID+`"}`); s.status != 200 {
		t.Fatal(s.status)
	}
	got := coachdS.until(t, "event: message_end")
	if text := textOf(mustEvents(t, got)); text != "Second turn, followed by parked streams." || !strings.Contains(got, "id: 2:1\n") {
		t.Errorf("coachd after the wake:\n%s", got)
	}
	if got := aspS.until(t, `"type":"message_stop"`); texts(got) != "Second turn, followed by parked streams." || !strings.Contains(got, "id: 2:") {
		t.Errorf("asp after the wake:\n%s", got)
	}
	var sage string
	for !strings.HasSuffix(texts(sage), "parked streams.") {
		sage += sageS.until(t, `data: {"text":`)
	}
	if texts(sage) != "Second turn, followed by parked streams." || !strings.Contains(sage, "id: 2:") {
		t.Errorf("sage after the wake:\n%s", sage)
	}
	waitFor(t, func() bool { return e.api.DetachedStreams() == 3 }) // parked again, none lost

	// A client that leaves is noticed (the prober, or a failed write).
	aspS.resp.Body.Close()
	waitFor(t, func() bool { return e.api.DetachedStreams() == 2 })

	e.api.Drain()
	if got := coachdS.until(t, "server_shutdown"); !strings.Contains(got, "last_event_id") {
		t.Errorf("coachd on Drain:\n%s", got)
	}
	sageS.until(t, "data: [DONE]")
	for name, s := range map[string]*rawStream{"coachd": coachdS, "sage": sageS} {
		select {
		case err := <-s.end:
			for line := range s.lines { // the frame's blank line, nothing more
				if line != "" {
					t.Errorf("%s: %q after the end", name, line)
				}
			}
			if !errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("%s: the body ended with %v, want a clean EOF", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the body did not end on Drain", name)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := e.api.WaitTurns(wctx); err != nil || e.api.DetachedStreams() != 0 {
		t.Errorf("WaitTurns: %v, %d detached streams left", err, e.api.DetachedStreams())
	}
}

var textField = regexp.MustCompile(`"text":("(?:[^"\\\\]|\\\\.)*")`)

// texts joins the "text" fields of the frames in raw (asp, sage).
func texts(raw string) string {
	var sb strings.Builder
	for _, m := range textField.FindAllStringSubmatch(raw, -1) {
		var s string
		json.Unmarshal([]byte(m[1]), &s)
		sb.WriteString(s)
	}
	return sb.String()
}

// mustEvents parses raw coachd-dialect SSE.
func mustEvents(t *testing.T, raw string) []client.Event {
	t.Helper()
	var out []client.Event
	er := client.NewEventReader(strings.NewReader(raw))
	for {
		ev, err := er.Next()
		if err != nil {
			return out
		}
		out = append(out, ev)
	}
}

// TestStreamNotParkedOverHTTP2: an HTTP/2 stream cannot be hijacked: it
// stays on its handler and still follows the next turn.
func TestStreamNotParkedOverHTTP2(t *testing.T) {
	e, srv := mustParkEnv(t, time.Hour, func(s *httptest.Server) {
		s.Config.Protocols = new(http.Protocols)
		s.Config.Protocols.SetHTTP1(true)
		s.Config.Protocols.SetUnencryptedHTTP2(true)
		s.Start()
	})
	ctx := context.Background()
	sess := e.MustSession(e.alice)
	h2c := new(http.Protocols)
	h2c.SetUnencryptedHTTP2(true)
	hc := &http.Client{Transport: &http.Transport{Protocols: h2c}}
	s := openRaw(t, hc, srv.URL+"/v1/sessions/"+sess.ID+"/stream", e.alice.key, "")
	if s.resp.ProtoMajor != 2 {
		t.Fatalf("protocol %s, want HTTP/2", s.resp.Proto)
	}
	s.until(t, "retry: ")
	e.fake.Enqueue(anthropictest.Text("Over HTTP/2, on the handler.", 4))
	if r := e.chat(ctx, e.alice.key, "", `{"message":"go","session_id":"`+sess.ID+`"}`); r.status != 200 {
		t.Fatal(r.status)
	}
	if got := s.until(t, "event: message_end"); textOf(mustEvents(t, got)) != "Over HTTP/2, on the handler." {
		t.Errorf("HTTP/2 follower:\n%s", got)
	}
	if n := e.api.DetachedStreams(); n != 0 {
		t.Errorf("%d HTTP/2 streams detached", n)
	}
	s.resp.Body.Close()
}

// TestStreamParkedClientGone: with no heartbeat due, a parked stream
// whose client left is found by the prober, and its connection closed.
func TestStreamParkedClientGone(t *testing.T) {
	e, srv := mustParkEnv(t, time.Hour, (*httptest.Server).Start)
	sess := e.MustSession(e.alice)
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	s := openRaw(t, hc, srv.URL+"/v1/sessions/"+sess.ID+"/stream", e.alice.key, "")
	s.until(t, "retry: ")
	waitFor(t, func() bool { return e.api.DetachedStreams() == 1 })
	s.resp.Body.Close()
	waitFor(t, func() bool { return e.api.DetachedStreams() == 0 })
}

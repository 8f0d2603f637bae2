package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
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

// chatEnv is a server with a runner talking to a fake Anthropic API.
type chatEnv struct {
	*env
	fake *anthropictest.Server
	api  *server.Server
}

// MustChatEnv starts a chat-capable server over a SQLite file; extra tools
// are added to the default agent.
func MustChatEnv(t testing.TB, ag *agent.Agent, extra ...coachd.Tool) *chatEnv {
	t.Helper()
	return mustChatEnv(t, server.Limits{}, ag, extra...)
}

// MustBudgetEnv is a chat-capable server with the given limits.
func MustBudgetEnv(t *testing.T, limits server.Limits) *chatEnv {
	t.Helper()
	return mustChatEnv(t, limits, nil)
}

func mustChatEnv(t testing.TB, limits server.Limits, ag *agent.Agent, extra ...coachd.Tool) *chatEnv {
	t.Helper()
	return mustChatEnvDeps(t, func(d *server.Deps) { d.Limits = limits }, ag, extra...)
}

// mustChatEnvDeps is mustChatEnv whose server's dependencies edit changes.
func mustChatEnvDeps(t testing.TB, edit func(*server.Deps), ag *agent.Agent, extra ...coachd.Tool) *chatEnv {
	t.Helper()
	return mustChatEnvDepsOn(t, filepath.Join(t.TempDir(), "coachd.db"), edit, ag, extra...)
}

// mustChatEnvDepsOn is mustChatEnvDeps on the database at dsn.
func mustChatEnvDepsOn(t testing.TB, dsn string, edit func(*server.Deps), ag *agent.Agent, extra ...coachd.Tool) *chatEnv {
	t.Helper()
	db := mustDB(t, dsn, nil)
	fake := anthropictest.NewServer()
	ts, err := agent.NewToolset(append(tools.Builtins(), extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	if ag == nil {
		ag = agent.DefaultAgent()
	}
	for _, x := range extra {
		ag.Tools = append(ag.Tools, x.Definition().Name)
	}
	logs := &syncbuf.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	runner := agent.NewRunner(agent.Config{
		Store: db, Tools: ts, Logger: logger,
		Model: anthropic.New(anthropic.Config{APIKey: "test", BaseURL: fake.URL(), MaxRetries: -1, NoCache: true}),
		Agents: func(name string) (*agent.Agent, bool) {
			if name == "" || name == ag.Name || name == server.DefaultAgent {
				return ag, true
			}
			return nil, false
		},
	})
	deps := server.Deps{Store: db, Logger: logger, AdminKey: adminKey, Runner: runner, Heartbeat: time.Hour}
	edit(&deps)
	api := server.New(deps)
	srv := httptest.NewServer(api)
	t.Cleanup(func() {
		closeServer(api, srv)
		fake.Close()
	})
	e := &env{t: t, db: db, url: srv.URL, logs: logs, admin: client.New(srv.URL, adminKey, srv.Client())}
	e.alice = e.MustUser("alice")
	e.bob = e.MustUser("bob")
	return &chatEnv{env: e, fake: fake, api: api}
}

// MustChatEnvB is MustChatEnv for benchmarks.
func MustChatEnvB(b *testing.B) *chatEnv { return MustChatEnv(b, nil) }

// stream is one streamed turn's answer.
type stream struct {
	status  int
	header  http.Header
	raw     []byte
	events  []client.Event
	errBody response
	err     error // the request failed: no response (tryChat)
}

// chat posts a turn to /v1/chat/stream and reads the whole stream. It
// fails the test when the request gets no response, so it is called from
// the test's goroutine only; other goroutines call tryChat.
func (e *chatEnv) chat(ctx context.Context, key, query, body string) stream {
	e.t.Helper()
	s := e.tryChat(ctx, key, query, body)
	if s.err != nil {
		e.t.Fatalf("chat: %v", s.err)
	}
	return s
}

// tryChat is chat for any goroutine: a request that gets no response is
// s.err, for the test's goroutine to judge (t.Fatal elsewhere would end
// the goroutine without its result and leave the test waiting for it).
func (e *chatEnv) tryChat(ctx context.Context, key, query, body string) stream {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.url+"/v1/chat/stream"+query, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return stream{err: err}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	s := stream{status: resp.StatusCode, header: resp.Header, raw: raw}
	if resp.StatusCode != http.StatusOK {
		s.errBody = response{status: resp.StatusCode, header: resp.Header, body: raw}
		return s
	}
	er := client.NewEventReader(bytes.NewReader(raw))
	for {
		ev, err := er.Next()
		if err != nil {
			break
		}
		s.events = append(s.events, ev)
	}
	return s
}

func (s stream) named(name string) []client.Event {
	var out []client.Event
	for _, ev := range s.events {
		if ev.Name == name {
			out = append(out, ev)
		}
	}
	return out
}

func (s stream) data(t *testing.T, name string) map[string]any {
	t.Helper()
	evs := s.named(name)
	if len(evs) == 0 {
		t.Fatalf("no %s event in:\n%s", name, s.raw)
	}
	var m map[string]any
	if err := json.Unmarshal(evs[len(evs)-1].Data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func toolRound() []anthropictest.Reply {
	return []anthropictest.Reply{
		anthropictest.Blocks(anthropictest.TextBlock("Let me check your notes. ", 6), anthropictest.ToolUse("toolu_1", "list_notes", `{}`, 3)),
		anthropictest.Text("You have none yet.", 5),
	}
}

func TestChatStreamDialects(t *testing.T) {
	e := MustChatEnv(t, nil)
	ctx := context.Background()
	for _, tc := range []struct {
		protocol   string
		first, end string // substrings of the first and last frames
	}{
		{"", `event: message_start`, `event: message_end`},
		{"coachd", `event: message_start`, `"stop_reason":"end_turn"`},
		{"asp", `data: {"type":"ack","session_id":"sess_`, `data: {"type":"message_stop","stop_reason":"end_turn"}`},
		{"sage", `data: {"text":"Let me`, `data: [DONE]`},
	} {
		t.Run("protocol="+tc.protocol, func(t *testing.T) {
			e.fake.Enqueue(toolRound()...)
			q := ""
			if tc.protocol != "" {
				q = "?protocol=" + tc.protocol
			}
			s := e.chat(ctx, e.alice.key, q, `{"message":"what do you know about me?"}`)
			if s.status != 200 {
				t.Fatalf("status %d: %s", s.status, s.raw)
			}
			for h, want := range map[string]string{"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"} {
				if got := s.header.Get(h); got != want {
					t.Errorf("%s: %q, want %q", h, got, want)
				}
			}
			sid := s.header.Get("X-Coachd-Session-Id")
			if !coachd.ValidID(coachd.PrefixSession, sid) {
				t.Fatalf("X-Coachd-Session-Id %q", sid)
			}
			frames := strings.Split(strings.TrimSpace(string(s.raw)), "\n\n")
			if !strings.HasPrefix(frames[0], tc.first) && !strings.Contains(frames[0], tc.first) {
				t.Errorf("first frame %q, want %q", frames[0], tc.first)
			}
			if last := frames[len(frames)-1]; !strings.Contains(last, tc.end) {
				t.Errorf("last frame %q, want %q", last, tc.end)
			}
			if tc.protocol == "" || tc.protocol == "coachd" {
				if got := s.data(t, "message_start")["session_id"]; got != sid {
					t.Errorf("message_start session_id %v, header %s", got, sid)
				}
				if r := s.data(t, "function_result"); r["name"] != "list_notes" {
					t.Errorf("function_result %v", r)
				}
				if len(s.named("round_boundary")) != 1 || len(s.named("content_delta")) < 3 {
					t.Errorf("events:\n%s", s.raw)
				}
			}
			msgs, _, err := e.alice.c.Messages(ctx, sid, coachd.Page{})
			if err != nil || len(msgs) != 4 || msgs[3].Content != "You have none yet." {
				t.Fatalf("stored %d messages, %v", len(msgs), err)
			}
		})
	}
}

func TestChatErrorsBeforeStream(t *testing.T) {
	e := MustChatEnv(t, nil)
	ctx := context.Background()
	alice := e.MustSession(e.alice)
	for _, tc := range []struct {
		name, key, query, body string
		status                 int
		code                   string
	}{
		{"NoKey", "", "", `{"message":"hi"}`, 401, coachd.EUNAUTHORIZED},
		{"BadProtocol", e.alice.key, "?protocol=xml", `{"message":"hi"}`, 400, coachd.EINVALID},
		{"BadOnBusy", e.alice.key, "?on_busy=maybe", `{"message":"hi"}`, 400, coachd.EINVALID},
		{"Empty", e.alice.key, "", `{}`, 400, coachd.EINVALID},
		{"Blank", e.alice.key, "", `{"message":"   "}`, 400, coachd.EINVALID},
		{"UnknownField", e.alice.key, "", `{"message":"hi","temperature":2}`, 400, coachd.EINVALID},
		{"TooLong", e.alice.key, "", `{"message":"` + strings.Repeat("a", 32001) + `"}`, 400, coachd.EINVALID},
		{"BadSession", e.alice.key, "", `{"message":"hi","session_id":"../../etc"}`, 400, coachd.EINVALID},
		{"OtherUsersSession", e.bob.key, "", `{"message":"hi","session_id":"` + alice.ID + `"}`, 404, coachd.ENOTFOUND},
		{"UnknownAgent", e.alice.key, "", `{"message":"hi","agent":"nope"}`, 400, coachd.EINVALID},
		{"AnswerWithoutPending", e.alice.key, "", `{"session_id":"` + alice.ID + `","tool_result":{"tool_use_id":"x","content":"a"}}`, 409, coachd.ECONFLICT},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(e.fake.Requests())
			s := e.chat(ctx, tc.key, tc.query, tc.body)
			if s.status != tc.status || s.errBody.errorCode() != tc.code {
				t.Fatalf("got %d %s, want %d %s: %s", s.status, s.errBody.errorCode(), tc.status, tc.code, s.raw)
			}
			// Errors before the stream are SSE error events on the stream
			// endpoint (seed 004's reader parses only events).
			if ct := s.header.Get("Content-Type"); ct != "text/event-stream" || !strings.HasPrefix(string(s.raw), "event: error\ndata: {") {
				t.Fatalf("content type %q: %s", ct, s.raw)
			}
			if len(e.fake.Requests()) != before {
				t.Fatal("the model was called")
			}
		})
	}
	if msgs, _, _ := e.alice.c.Messages(ctx, alice.ID, coachd.Page{}); len(msgs) != 3 {
		t.Fatalf("alice's session changed: %d messages", len(msgs))
	}
}

// TestChatBusy runs one turn that stalls upstream, then a second on the
// same session: 409 at once, or a queued wait with on_busy=wait (the first
// ends when its client leaves: on_disconnect=cancel).
func TestChatBusy(t *testing.T) {
	e := MustChatEnv(t, nil)
	ctx := context.Background()
	sess := e.MustSession(e.alice)
	e.fake.Enqueue(anthropictest.Text("This one hangs", 4).StallAfter(4), anthropictest.Text("second", 3))
	ctx1, cancel1 := context.WithCancel(ctx)
	first := make(chan stream, 1)
	body := `{"message":"one","session_id":"` + sess.ID + `"}`
	// Cancelled before coachd's response headers reach it, the first
	// request has no response: that is as good as a cut stream here.
	go func() { first <- e.tryChat(ctx1, e.alice.key, "?on_disconnect=cancel", body) }()
	// The first turn holds the session once the fake has its request.
	waitFor(t, func() bool { return len(e.fake.Requests()) == 1 })
	s := e.chat(ctx, e.alice.key, "", `{"message":"two","session_id":"`+sess.ID+`"}`)
	if s.status != 409 || s.errBody.errorCode() != coachd.ETURNINPROGRESS {
		t.Fatalf("got %d %s", s.status, s.raw)
	}
	second := make(chan stream, 1)
	go func() {
		second <- e.tryChat(ctx, e.alice.key, "?on_busy=wait", `{"message":"two","session_id":"`+sess.ID+`"}`)
	}()
	cancel1()
	<-first
	s = <-second
	if s.err != nil {
		t.Fatalf("queued turn: %v", s.err)
	}
	if s.status != 200 || s.data(t, "message_end")["stop_reason"] != "end_turn" {
		t.Fatalf("queued turn: %d %s", s.status, s.raw)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestChatDisconnect drops the client mid-stream with on_disconnect=cancel:
// the upstream request is closed, the partial reply is stored marked
// partial, and the session goes on.
func TestChatDisconnect(t *testing.T) {
	e := MustChatEnv(t, nil)
	ctx := context.Background()
	e.fake.Enqueue(anthropictest.Text("A long answer that stops halfway", 4).StallAfter(6))
	cctx, cancel := context.WithCancel(ctx)
	sid, err := e.alice.c.ChatStream(cctx, client.ChatRequest{Message: "tell me"}, client.StreamOptions{OnDisconnect: "cancel"}, func(ev client.Event) error {
		if ev.Name == "content_delta" {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) && err != nil && !strings.Contains(err.Error(), "canceled") {
		t.Fatalf("stream: %v", err)
	}
	select {
	case <-e.fake.Disconnects():
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream connection was not closed")
	}
	var msgs []*coachd.Message
	waitFor(t, func() bool {
		msgs, _, _ = e.alice.c.Messages(ctx, sid, coachd.Page{})
		return len(msgs) == 2
	})
	if !msgs[1].Partial || !strings.HasPrefix("A long answer that stops halfway", msgs[1].Content) || msgs[1].Content == "" {
		t.Fatalf("partial reply %+v", msgs[1])
	}
	e.fake.Enqueue(anthropictest.Text("Back again.", 5))
	s := e.chat(ctx, e.alice.key, "?on_busy=wait", `{"message":"go on","session_id":"`+sid+`"}`)
	if s.status != 200 || s.data(t, "message_end")["stop_reason"] != "end_turn" {
		t.Fatalf("next turn: %d %s", s.status, s.raw)
	}
}

// TestChatInteraction pauses on show_options, refuses a wrong id and a
// second answer, and resumes with the right one.
func TestChatInteraction(t *testing.T) {
	e := MustChatEnv(t, nil)
	ctx := context.Background()
	e.fake.Enqueue(anthropictest.Blocks(anthropictest.TextBlock("Pick:", 3),
		anthropictest.ToolUse("toolu_o", "show_options", `{"options":["Airport","Downtown"]}`)))
	s := e.chat(ctx, e.alice.key, "", `{"message":"where?"}`)
	in := s.data(t, "interaction")
	if in["tool_use_id"] != "toolu_o" || in["name"] != "show_options" || s.data(t, "message_end")["stop_reason"] != "awaiting_input" {
		t.Fatalf("stream:\n%s", s.raw)
	}
	sid := s.header.Get("X-Coachd-Session-Id")
	wrong := e.chat(ctx, e.alice.key, "", `{"session_id":"`+sid+`","tool_result":{"tool_use_id":"toolu_x","content":"Airport"}}`)
	if wrong.status != 409 {
		t.Fatalf("wrong id: %d %s", wrong.status, wrong.raw)
	}
	e.fake.Enqueue(anthropictest.Text("Airport it is.", 4))
	answer := `{"session_id":"` + sid + `","tool_result":{"tool_use_id":"toolu_o","content":"Airport"}}`
	if ok := e.chat(ctx, e.alice.key, "", answer); ok.status != 200 || ok.data(t, "message_end")["stop_reason"] != "end_turn" {
		t.Fatalf("answer: %d %s", ok.status, ok.raw)
	}
	if again := e.chat(ctx, e.alice.key, "", answer); again.status != 409 {
		t.Fatalf("second answer: %d %s", again.status, again.raw)
	}
	msgs, _, _ := e.alice.c.Messages(ctx, sid, coachd.Page{})
	if len(msgs) != 4 || msgs[2].Blocks[0].ResultText() != "Airport" {
		t.Fatalf("stored %d messages", len(msgs))
	}
}

func TestChatNonStreaming(t *testing.T) {
	e := MustChatEnv(t, nil)
	e.fake.Enqueue(toolRound()...)
	r := e.do(request{method: "POST", path: "/v1/chat", key: e.alice.key, body: `{"message":"notes?"}`})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var got struct {
		SessionID  string `json:"session_id"`
		StopReason string `json:"stop_reason"`
		Text       string `json:"text"`
		ToolCalls  []struct {
			Name string `json:"name"`
		} `json:"tool_calls"`
		Usage coachd.Usage `json:"usage"`
	}
	mustUnmarshal(t, r.body, &got)
	if got.StopReason != "end_turn" || got.Text != "Let me check your notes. You have none yet." ||
		len(got.ToolCalls) != 1 || got.ToolCalls[0].Name != "list_notes" || got.Usage.OutputTokens == 0 || got.SessionID == "" {
		t.Fatalf("got %s", r.body)
	}
	// An upstream failure before anything was said is an HTTP error.
	e.fake.Enqueue(anthropictest.Status(529, nil, ""))
	r = e.do(request{method: "POST", path: "/v1/chat", key: e.alice.key, body: `{"message":"again"}`})
	if r.status != 503 || r.errorCode() != coachd.EUPSTREAMBUSY {
		t.Fatalf("upstream busy: %d %s", r.status, r.body)
	}
}

// TestChatBadOnDisconnect: an on_disconnect the server does not know is
// refused before the turn is admitted (the admission stores the user's
// message): 400, no message stored, nothing held, no model call.
func TestChatBadOnDisconnect(t *testing.T) {
	e := MustChatEnv(t, nil)
	ctx := context.Background()
	sess := e.MustSession(e.alice)
	before, err := e.db.History(ctx, e.alice.ID, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, dialect := range []string{"", "&protocol=sage"} {
		s := e.chat(ctx, e.alice.key, "?on_disconnect=later"+dialect, `{"message":"one","session_id":"`+sess.ID+`"}`)
		if s.status != 400 {
			t.Fatalf("%q: got %d %s", dialect, s.status, s.raw)
		}
	}
	msgs, err := e.db.History(ctx, e.alice.ID, sess.ID)
	if err != nil || len(msgs) != len(before) {
		t.Fatalf("a refused turn stored %d messages (%v)", len(msgs)-len(before), err)
	}
	if st, err := e.db.BudgetStatus(ctx, e.alice.ID); err != nil || st.TokensReserved != 0 {
		t.Fatalf("a refused turn holds %+v (%v)", st, err)
	}
	if n := len(e.fake.Requests()); n != 0 {
		t.Fatalf("%d model calls", n)
	}
}

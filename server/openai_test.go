package server_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/server"
)

type completion struct {
	Choices []struct {
		Message      struct{ Content string }
		FinishReason string `json:"finish_reason"`
	}
}

func oaiBody(messages ...string) string {
	var msgs []map[string]string
	for i, m := range messages {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs = append(msgs, map[string]string{"role": role, "content": m})
	}
	b, _ := json.Marshal(map[string]any{"model": "default", "messages": msgs})
	return string(b)
}

func oaiErrorOf(t *testing.T, r response) (typ, code string) {
	t.Helper()
	var e struct {
		Error struct{ Type, Code, Message string }
	}
	if err := json.Unmarshal(r.body, &e); err != nil || e.Error.Message == "" {
		t.Fatalf("not an OpenAI error: %d %s", r.status, r.body)
	}
	return e.Error.Type, e.Error.Code
}

// TestOpenAIPauseAnsweredByNumber: an interactive tool renders as numbered
// choices; the next message's number answers it as the tool's result.
func TestOpenAIPauseAnsweredByNumber(t *testing.T) {
	e := MustChatEnv(t, nil)
	e.fake.Enqueue(anthropictest.Blocks(anthropictest.TextBlock("Where to?", 4),
		anthropictest.ToolUse("toolu_o", "show_options", `{"prompt":"Pick a zone","options":["Airport","Downtown"]}`)),
		anthropictest.Text("Downtown it is.", 4))
	var c completion
	r := e.post(e.alice.key, "/v1/chat/completions", oaiBody("where should I drive?"), nil, &c)
	text := c.Choices[0].Message.Content
	if r.status != 200 || !strings.Contains(text, "Pick a zone\n1. Airport\n2. Downtown") {
		t.Fatalf("pause: %d %s", r.status, r.body)
	}
	r = e.post(e.alice.key, "/v1/chat/completions", oaiBody("where should I drive?", text, "2"), nil, &c)
	if r.status != 200 || c.Choices[0].Message.Content != "Downtown it is." {
		t.Fatalf("answer: %d %s", r.status, r.body)
	}
	reqs := e.fake.Requests()
	res := reqs[len(reqs)-1].ToolResults()
	if len(res) != 1 || res[0].ResultText() != "Downtown" {
		t.Errorf("the tool's result: %+v", res)
	}
}

// TestOpenAISessionHeader: X-Coachd-Session-Id names the session whatever
// the messages; another user's is not found.
func TestOpenAISessionHeader(t *testing.T) {
	e := MustChatEnv(t, nil)
	sess := e.MustSession(e.alice)
	e.fake.Enqueue(anthropictest.Text("Continuing.", 4))
	r := e.post(e.alice.key, "/v1/chat/completions", oaiBody("new words"), map[string]string{"X-Coachd-Session-Id": sess.ID}, nil)
	if r.status != 200 || r.header.Get("X-Coachd-Session-Id") != sess.ID {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if msgs := e.fake.Requests()[0].Messages(); msgs[0].Blocks[0].Text != "When should I drive?" {
		t.Errorf("the stored history was not used: %+v", msgs)
	}
	r = e.post(e.bob.key, "/v1/chat/completions", oaiBody("hi"), map[string]string{"X-Coachd-Session-Id": sess.ID}, nil)
	if typ, _ := oaiErrorOf(t, r); r.status != 404 || typ != "not_found_error" {
		t.Errorf("bob: %d %s", r.status, r.body)
	}
}

// TestOpenAIErrors: budget, rate limit, bad body, a mid-stream failure,
// all in OpenAI's shape.
func TestOpenAIErrors(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{Rate: coachd.RateLimit{N: 2, Per: time.Hour}})
	r := e.post(e.alice.key, "/v1/chat/completions", `{"model":`, nil, nil)
	if typ, _ := oaiErrorOf(t, r); r.status != 400 || typ != "invalid_request_error" {
		t.Errorf("bad body: %d %s", r.status, r.body)
	}
	e.fake.Enqueue(anthropictest.Text("The first words, then", 4).ErrorAfter(4, "api_error", "boom"))
	s := e.do(request{method: "POST", path: "/v1/chat/completions", key: e.alice.key,
		body: `{"model":"default","stream":true,"messages":[{"role":"user","content":"go"}]}`})
	if s.status != 200 || !strings.Contains(string(s.body), `"error":{`) || !strings.HasSuffix(string(s.body), "data: [DONE]\n\n") {
		t.Errorf("mid-stream error: %d %s", s.status, s.body)
	}
	zero := int64(0)
	if _, err := e.db.UpdateUser(t.Context(), e.alice.ID, coachd.UserUpdate{TokenBudget: &zero}); err != nil {
		t.Fatal(err)
	}
	r = e.post(e.alice.key, "/v1/chat/completions", oaiBody("hi"), nil, nil)
	if typ, code := oaiErrorOf(t, r); r.status != 402 || typ != "insufficient_quota" || code != "insufficient_quota" {
		t.Errorf("budget: %d %s", r.status, r.body)
	}
	r = e.post(e.alice.key, "/v1/chat/completions", oaiBody("hi"), nil, nil)
	if typ, _ := oaiErrorOf(t, r); r.status != 429 || typ != "rate_limit_error" || r.header.Get("Retry-After") == "" {
		t.Errorf("rate limit: %d %s %v", r.status, r.body, r.header)
	}
}

// TestUIChatScopedToUser: a useChat id names a session of its user only:
// another user with the same id gets a chat of their own; a bad body or
// trigger is refused before any turn.
func TestUIChatScopedToUser(t *testing.T) {
	e := MustChatEnv(t, nil)
	body := `{"id":"chat-1","trigger":"submit-message","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"hi"}]}]}`
	e.fake.Enqueue(anthropictest.Text("For alice.", 4), anthropictest.Text("For bob.", 4))
	a := e.chat(t.Context(), e.alice.key, "?protocol=ai-sdk", body)
	b := e.chat(t.Context(), e.bob.key, "?protocol=ai-sdk", body)
	if a.status != 200 || b.status != 200 || a.header.Get("X-Vercel-AI-UI-Message-Stream") != "v1" {
		t.Fatalf("%d %d %v", a.status, b.status, a.header)
	}
	if sa, sb := a.header.Get("X-Coachd-Session-Id"), b.header.Get("X-Coachd-Session-Id"); sa == "" || sa == sb {
		t.Errorf("sessions %q and %q", sa, sb)
	}
	if !strings.Contains(string(a.raw), `"type":"text-delta"`) || !strings.HasSuffix(string(a.raw), "data: [DONE]\n\n") {
		t.Errorf("stream:\n%s", a.raw)
	}
	if len(e.fake.Requests()[1].Messages()) != 1 {
		t.Error("bob's turn saw alice's history")
	}
	for _, bad := range []string{`{"id":"","messages":[]}`, `{"id":"c","trigger":"edit-message","messages":[{"role":"user","parts":[]}]}`} {
		if s := e.chat(t.Context(), e.alice.key, "?protocol=ai-sdk", bad); s.status != 400 {
			t.Errorf("%s: %d", bad, s.status)
		}
	}
}

// TestOpenAIExpiredPauseTakesMessage: a number typed after the pause
// expired (a day later, say) is the user's message, which dismisses the
// pause, not an answer refused with 409 "send a message instead" that an
// OpenAI client can never get past (it did send a message).
func TestOpenAIExpiredPauseTakesMessage(t *testing.T) {
	e := MustChatEnv(t, nil)
	e.fake.Enqueue(anthropictest.Blocks(anthropictest.TextBlock("Where to?", 4),
		anthropictest.ToolUse("toolu_o", "show_options", `{"prompt":"Pick a zone","options":["Airport","Downtown"]}`)),
		anthropictest.Text("Starting over: where are you now?", 4))
	var c completion
	r := e.post(e.alice.key, "/v1/chat/completions", oaiBody("where should I drive?"), nil, &c)
	if r.status != 200 {
		t.Fatalf("pause: %d %s", r.status, r.body)
	}
	sid := r.header.Get("X-Coachd-Session-Id")
	sess, err := e.db.FindSession(t.Context(), e.alice.ID, sid)
	if err != nil || sess.Pending == nil {
		t.Fatalf("no pending interaction: %v", err)
	}
	p := *sess.Pending
	p.ExpiresAt = time.Now().Add(-time.Minute)
	if _, err := e.db.UpdateSession(t.Context(), e.alice.ID, sid, coachd.SessionUpdate{SetPending: true, Pending: &p}); err != nil {
		t.Fatal(err)
	}
	r = e.post(e.alice.key, "/v1/chat/completions", oaiBody("where should I drive?", c.Choices[0].Message.Content, "2"), nil, &c)
	if r.status != 200 || r.header.Get("X-Coachd-Session-Id") != sid || c.Choices[0].Message.Content != "Starting over: where are you now?" {
		t.Fatalf("a number after the pause expired: %d %s", r.status, r.body)
	}
}

// TestOpenAIRefusedBeforeBody: a caller a rate limit refused is refused
// again before its next body is read, as on /v1/chat/stream: a body that
// would be a 400 gets the 429.
func TestOpenAIRefusedBeforeBody(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{Rate: coachd.RateLimit{N: 1, Per: time.Hour}})
	e.fake.Enqueue(anthropictest.Text("Start downtown.", 2))
	if r := e.post(e.alice.key, "/v1/chat/completions", oaiBody("where?"), nil, nil); r.status != 200 {
		t.Fatalf("first: %d %s", r.status, r.body)
	}
	if r := e.post(e.alice.key, "/v1/chat/completions", oaiBody("and now?"), nil, nil); r.status != 429 {
		t.Fatalf("over the limit: %d %s", r.status, r.body)
	}
	r := e.post(e.alice.key, "/v1/chat/completions", `{"model":`, nil, nil)
	if typ, _ := oaiErrorOf(t, r); r.status != 429 || typ != "rate_limit_error" || r.header.Get("Retry-After") == "" {
		t.Errorf("refused again, a body it would not decode: %d %s", r.status, r.body)
	}
	// Another user is not refused by alice's limit, and a bad body of
	// theirs is still a 400.
	if r := e.post(e.bob.key, "/v1/chat/completions", `{"model":`, nil, nil); r.status != 400 {
		t.Errorf("bob's bad body: %d %s", r.status, r.body)
	}
}

// TestOpenAIClientToolChoice: the tools a chat UI sends with each message
// are not the coach's; a tool_choice that lets the model answer without
// them ("auto", "none") runs the turn, one that requires a call of them
// is a 400 naming the field.
func TestOpenAIClientToolChoice(t *testing.T) {
	e := MustChatEnv(t, nil)
	tools := `"tools":[{"type":"function","function":{"name":"web_search","parameters":{"type":"object"}}}]`
	for _, c := range []struct{ extra, param string }{
		{`"tool_choice":"none"`, ""},
		{`"functions":[{"name":"f"}],"function_call":"auto"`, ""},
		{`"tool_choice":"required"`, "tool_choice"},
		{`"tool_choice":{"type":"function","function":{"name":"web_search"}}`, "tool_choice"},
		{`"function_call":{"name":"f"}`, "function_call"},
	} {
		if c.param == "" {
			e.fake.Enqueue(anthropictest.Text("Hi.", 2))
		}
		r := e.post(e.alice.key, "/v1/chat/completions", `{"model":"default",`+tools+`,`+c.extra+`,"messages":[{"role":"user","content":"hi"}]}`, nil, nil)
		var body struct{ Error struct{ Param string } }
		json.Unmarshal(r.body, &body)
		if want := map[bool]int{true: 200, false: 400}[c.param == ""]; r.status != want || body.Error.Param != c.param {
			t.Errorf("%s: %d %s, want %d on %q", c.extra, r.status, r.body, want, c.param)
		}
	}
	for _, req := range e.fake.Requests() {
		if req.HasTool("web_search") || req.HasTool("f") {
			t.Errorf("the client's tools were offered to the coach")
		}
	}
}

package server_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/server"
)

// modelTexts is the history a model request holds, as "role: text" of
// each message's text blocks.
func modelTexts(r *anthropictest.Request) []string {
	var out []string
	for _, m := range r.Messages() {
		var sb strings.Builder
		for _, b := range m.Blocks {
			sb.WriteString(b.Text)
		}
		out = append(out, string(m.Role)+": "+sb.String())
	}
	return out
}

// TestOpenAIRegenerateAndEdit: a chat UI's Regenerate of a good reply,
// and an edit of an earlier message, resend the conversation up to a
// point the stored session is past: the model sees the history the
// client shows, not the reply or message it discarded. Either branch
// goes on afterwards, and the stored session is left as it was.
func TestOpenAIRegenerateAndEdit(t *testing.T) {
	e := MustChatEnv(t, nil)
	e.fake.Enqueue(anthropictest.Text("Airport first.", 4), anthropictest.Text("Then downtown.", 4),
		anthropictest.Text("Then the stadium.", 4), anthropictest.Text("Lunch at noon.", 4),
		anthropictest.Text("Welcome.", 4), anthropictest.Text("Glad to help.", 4))
	var c completion
	post := func(msgs ...string) string {
		t.Helper()
		r := e.post(e.alice.key, "/v1/chat/completions", oaiBody(msgs...), nil, &c)
		if r.status != 200 {
			t.Fatalf("%q: %d %s", msgs, r.status, r.body)
		}
		return r.header.Get("X-Coachd-Session-Id")
	}
	first := post("Plan my night")
	post("Plan my night", "Airport first.", "And after?")
	regen := post("Plan my night", "Airport first.", "And after?")
	edit := post("Plan my night", "Airport first.", "What about lunch?")
	// Each branch goes on where it is.
	again := post("Plan my night", "Airport first.", "And after?", "Then the stadium.", "Thanks")
	orig := post("Plan my night", "Airport first.", "And after?", "Then downtown.", "Thanks")
	reqs := e.fake.Requests()
	want := [][]string{
		2: {"user: Plan my night", "assistant: Airport first.", "user: And after?"},
		3: {"user: Plan my night", "assistant: Airport first.", "user: What about lunch?"},
		4: {"user: Plan my night", "assistant: Airport first.", "user: And after?", "assistant: Then the stadium.", "user: Thanks"},
		5: {"user: Plan my night", "assistant: Airport first.", "user: And after?", "assistant: Then downtown.", "user: Thanks"},
	}
	for i := 2; i < len(want); i++ {
		if got := modelTexts(&reqs[i]); !slices.Equal(got, want[i]) {
			t.Errorf("request %d's history:\n got %q\nwant %q", i, got, want[i])
		}
	}
	if regen == first || edit == first || edit == regen || again != regen || orig != first {
		t.Errorf("sessions: first %s, regenerated %s, edited %s, then %s and %s", first, regen, edit, again, orig)
	}
	// The session the client left keeps its messages, its branch's next
	// turn after them.
	hist, err := e.db.History(t.Context(), e.alice.ID, first)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range hist {
		got = append(got, m.Content)
	}
	if w := []string{"Plan my night", "Airport first.", "And after?", "Then downtown.", "Thanks", "Glad to help."}; !slices.Equal(got, w) {
		t.Errorf("the first session: %q, want %q", got, w)
	}
}

// TestBranchRefusedLeavesNoSession: a Regenerate or an edit whose turn
// is refused (the user's budget spent) leaves no new session behind, on
// either door: each refused try made one, a copy of the conversation.
func TestBranchRefusedLeavesNoSession(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{})
	e.fake.Enqueue(anthropictest.Text("Airport first.", 4), anthropictest.Text("Then downtown.", 4),
		anthropictest.Text("Airport first.", 4), anthropictest.Text("Then downtown.", 4))
	for _, body := range []string{oaiBody("Plan my night"), oaiBody("Plan my night", "Airport first.", "And after?")} {
		if r := e.post(e.alice.key, "/v1/chat/completions", body, nil, nil); r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
	}
	u1 := `{"id":"u1","role":"user","parts":[{"type":"text","text":"Plan my night"}]}`
	a1 := `{"id":"a1","role":"assistant","parts":[{"type":"text","text":"Airport first."}]}`
	u2 := `{"id":"u2","role":"user","parts":[{"type":"text","text":"And after?"}]}`
	for _, body := range []string{`{"id":"c","messages":[` + u1 + `]}`, `{"id":"c","messages":[` + u1 + `,` + a1 + `,` + u2 + `]}`} {
		if s := e.chat(t.Context(), e.alice.key, "?protocol=ai-sdk", body); s.status != 200 {
			t.Fatalf("%d %s", s.status, s.raw)
		}
	}
	zero := int64(0)
	if _, err := e.db.UpdateUser(t.Context(), e.alice.ID, coachd.UserUpdate{TokenBudget: &zero}); err != nil {
		t.Fatal(err)
	}
	if r := e.post(e.alice.key, "/v1/chat/completions", oaiBody("Plan my night", "Airport first.", "And after?"), nil, nil); r.status != 402 {
		t.Errorf("regenerate: %d %s", r.status, r.body)
	}
	if s := e.chat(t.Context(), e.alice.key, "?protocol=ai-sdk", `{"id":"c","trigger":"regenerate-message","messages":[`+u1+`,`+a1+`,`+u2+`]}`); s.status != 402 {
		t.Errorf("useChat's regenerate: %d %s", s.status, s.raw)
	}
	sessions, _, err := e.db.ListSessions(t.Context(), e.alice.ID, coachd.Page{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions) != 2 {
		t.Errorf("%d sessions, want the two conversations'", len(sessions))
	}
}

// TestOpenAIEditedPauseAnswer: the user answered a numbered question,
// then edits that answer (a chat UI's edit of the message "2" to "1"):
// the edited message answers the question as the tool's result, in the
// fork, as the first answer did; not a plain "1" the model reads after a
// question it never saw answered.
func TestOpenAIEditedPauseAnswer(t *testing.T) {
	e := MustChatEnv(t, nil)
	e.fake.Enqueue(anthropictest.Blocks(anthropictest.TextBlock("Where to?", 4),
		anthropictest.ToolUse("toolu_o", "show_options", `{"prompt":"Pick a zone","options":["Airport","Downtown"]}`)),
		anthropictest.Text("Downtown it is.", 4), anthropictest.Text("Airport it is.", 4))
	var c completion
	r := e.post(e.alice.key, "/v1/chat/completions", oaiBody("where should I drive?"), nil, &c)
	question := c.Choices[0].Message.Content
	if r.status != 200 || !strings.Contains(question, "1. Airport") {
		t.Fatalf("pause: %d %s", r.status, r.body)
	}
	first := r.header.Get("X-Coachd-Session-Id")
	if r := e.post(e.alice.key, "/v1/chat/completions", oaiBody("where should I drive?", question, "2"), nil, &c); r.status != 200 {
		t.Fatalf("answer: %d %s", r.status, r.body)
	}
	r = e.post(e.alice.key, "/v1/chat/completions", oaiBody("where should I drive?", question, "1"), nil, &c)
	if r.status != 200 || c.Choices[0].Message.Content != "Airport it is." {
		t.Fatalf("edited answer: %d %s", r.status, r.body)
	}
	if r.header.Get("X-Coachd-Session-Id") == first {
		t.Errorf("the edit went on in the first session")
	}
	reqs := e.fake.Requests()
	last := reqs[len(reqs)-1]
	res := last.ToolResults()
	if len(res) != 1 || res[0].ResultText() != "Airport" || res[0].ToolUseID != "toolu_o" {
		t.Errorf("the tool's result: %+v", res)
	}
	for _, txt := range modelTexts(&last) {
		if strings.HasSuffix(txt, ": 1") {
			t.Errorf("the model saw the answer as text: %q", modelTexts(&last))
		}
	}
}

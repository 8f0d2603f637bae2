package server_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
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

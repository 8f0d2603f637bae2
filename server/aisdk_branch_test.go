package server_test

import (
	"slices"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestUIChatEditAndRegenerate: useChat's body after an edit of an earlier
// message (sendMessage with its messageId) and after regenerate() of the
// reply it has holds the chat up to there: the model sees that chat, in
// a new session, and the chat's next message goes on there.
func TestUIChatEditAndRegenerate(t *testing.T) {
	e := MustChatEnv(t, nil)
	e.fake.Enqueue(anthropictest.Text("Airport first.", 4), anthropictest.Text("Then downtown.", 4),
		anthropictest.Text("Lunch at noon.", 4), anthropictest.Text("Lunch at one.", 4), anthropictest.Text("Welcome.", 4))
	u1 := `{"id":"u1","role":"user","parts":[{"type":"text","text":"Plan my night"}]}`
	a1 := `{"id":"a1","role":"assistant","parts":[{"type":"text","text":"Airport first."}]}`
	u2 := func(text string) string {
		return `{"id":"u2","role":"user","parts":[{"type":"text","text":"` + text + `"}]}`
	}
	a2 := `{"id":"a2","role":"assistant","parts":[{"type":"text","text":"Lunch at one."}]}`
	u3 := `{"id":"u3","role":"user","parts":[{"type":"text","text":"Thanks"}]}`
	for i, body := range []string{
		`{"id":"chat-b","trigger":"submit-message","messages":[` + u1 + `]}`,
		`{"id":"chat-b","trigger":"submit-message","messages":[` + u1 + `,` + a1 + `,` + u2("And after?") + `]}`,
		`{"id":"chat-b","trigger":"submit-message","messageId":"u2","messages":[` + u1 + `,` + a1 + `,` + u2("What about lunch?") + `]}`,
		`{"id":"chat-b","trigger":"regenerate-message","messages":[` + u1 + `,` + a1 + `,` + u2("What about lunch?") + `]}`,
		`{"id":"chat-b","trigger":"submit-message","messages":[` + u1 + `,` + a1 + `,` + u2("What about lunch?") + `,` + a2 + `,` + u3 + `]}`,
	} {
		if s := e.chat(t.Context(), e.alice.key, "?protocol=ai-sdk", body); s.status != 200 {
			t.Fatalf("request %d: %d %s", i, s.status, s.raw)
		}
	}
	reqs := e.fake.Requests()
	want := [][]string{
		2: {"user: Plan my night", "assistant: Airport first.", "user: What about lunch?"},
		3: {"user: Plan my night", "assistant: Airport first.", "user: What about lunch?"},
		4: {"user: Plan my night", "assistant: Airport first.", "user: What about lunch?", "assistant: Lunch at one.", "user: Thanks"},
	}
	for i := 2; i < len(want); i++ {
		if got := modelTexts(&reqs[i]); !slices.Equal(got, want[i]) {
			t.Errorf("request %d's history:\n got %q\nwant %q", i, got, want[i])
		}
	}
}

// TestUIChatLastMessageOnly: a transport that sends only the chat's last
// message (prepareSendMessagesRequest, as the README suggests) goes on in
// the chat's session: a body of one message is no edit.
func TestUIChatLastMessageOnly(t *testing.T) {
	e := MustChatEnv(t, nil)
	e.fake.Enqueue(anthropictest.Text("Airport first.", 4), anthropictest.Text("Then downtown.", 4), anthropictest.Text("Welcome.", 4))
	var sessions []string
	for i, text := range []string{"Plan my night", "And after?", "Thanks"} {
		body := `{"id":"chat-l","trigger":"submit-message","messages":[{"id":"u` + string(rune('1'+i)) + `","role":"user","parts":[{"type":"text","text":"` + text + `"}]}]}`
		s := e.chat(t.Context(), e.alice.key, "?protocol=ai-sdk", body)
		if s.status != 200 {
			t.Fatalf("request %d: %d %s", i, s.status, s.raw)
		}
		sessions = append(sessions, s.header.Get("X-Coachd-Session-Id"))
	}
	if sessions[0] == "" || sessions[1] != sessions[0] || sessions[2] != sessions[0] {
		t.Errorf("sessions %q, want one", sessions)
	}
	reqs := e.fake.Requests()
	want := []string{"user: Plan my night", "assistant: Airport first.", "user: And after?", "assistant: Then downtown.", "user: Thanks"}
	if got := modelTexts(&reqs[2]); !slices.Equal(got, want) {
		t.Errorf("the third turn's history: %q, want %q", got, want)
	}
}

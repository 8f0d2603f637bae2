package server_test

import (
	"slices"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestUIChatEditAfterNewSession: once the coach completed a chat's
// session, the chat goes on in a new one, which holds only the messages
// since; useChat still sends the whole chat. Its user messages before
// the last were counted against the new session's as if it held them
// all: a regenerate() of the new session's reply found nothing to
// redo (409 "nothing to retry"), and an edited message went on after
// the message it replaces, which the model then read twice.
func TestUIChatEditAfterNewSession(t *testing.T) {
	e := MustChatEnv(t, nil)
	e.fake.Enqueue(anthropictest.Text("Good session.", 4), anthropictest.Text("Welcome back.", 4),
		anthropictest.Text("Airport first.", 4), anthropictest.Text("Downtown first.", 4), anthropictest.Text("Lunch at noon.", 4))
	user := func(id, text string) string {
		return `{"id":"` + id + `","role":"user","parts":[{"type":"text","text":"` + text + `"}]}`
	}
	reply := func(id, text string) string {
		return `{"id":"` + id + `","role":"assistant","parts":[{"type":"text","text":"` + text + `"}]}`
	}
	post := func(body string) stream {
		t.Helper()
		s := e.chat(t.Context(), e.alice.key, "?protocol=ai-sdk", body)
		if s.status != 200 {
			t.Fatalf("%s: %d %s", body, s.status, s.raw)
		}
		return s
	}
	u1, a1 := user("u1", "wrap up"), reply("a1", "Good session.")
	first := post(`{"id":"chat-n","trigger":"submit-message","messages":[` + u1 + `]}`)
	done := coachd.SessionCompleted
	if _, err := e.db.UpdateSession(t.Context(), e.alice.ID, first.header.Get("X-Coachd-Session-Id"), coachd.SessionUpdate{Status: &done}); err != nil {
		t.Fatal(err)
	}
	u2, a2 := user("u2", "I'm back"), reply("a2", "Welcome back.")
	post(`{"id":"chat-n","trigger":"submit-message","messages":[` + u1 + `,` + a1 + `,` + u2 + `]}`)
	u3 := user("u3", "Where to start?")
	post(`{"id":"chat-n","trigger":"submit-message","messages":[` + u1 + `,` + a1 + `,` + u2 + `,` + a2 + `,` + u3 + `]}`)
	post(`{"id":"chat-n","trigger":"regenerate-message","messageId":"a3","messages":[` + u1 + `,` + a1 + `,` + u2 + `,` + a2 + `,` + u3 + `]}`)
	post(`{"id":"chat-n","trigger":"submit-message","messageId":"u3","messages":[` + u1 + `,` + a1 + `,` + u2 + `,` + a2 + `,` + user("u3", "When is lunch?") + `]}`)
	reqs := e.fake.Requests()
	want := [][]string{
		3: {"user: I'm back", "assistant: Welcome back.", "user: Where to start?"},
		4: {"user: I'm back", "assistant: Welcome back.", "user: When is lunch?"},
	}
	for i := 3; i < len(want); i++ {
		if got := modelTexts(&reqs[i]); !slices.Equal(got, want[i]) {
			t.Errorf("request %d's history:\n got %q\nwant %q", i, got, want[i])
		}
	}
}

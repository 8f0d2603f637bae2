package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestForeignDoorsCompletedSession: once the coach completed a session
// (end_session, an arc), a conversation that an OpenAI client resends, or
// a useChat chat id, goes on in a new session, "starting fresh" as the
// coach says. A review found every further message of that chat refused
// with 409 "session is completed; start a new session", which these
// clients cannot do short of dropping the chat. A session the client
// names itself (X-Coachd-Session-Id) is still refused.
func TestForeignDoorsCompletedSession(t *testing.T) {
	e := MustChatEnv(t, nil)
	complete := func(sid string) {
		t.Helper()
		done := coachd.SessionCompleted
		if _, err := e.db.UpdateSession(t.Context(), e.alice.ID, sid, coachd.SessionUpdate{Status: &done}); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("OpenAI", func(t *testing.T) {
		e.fake.Enqueue(anthropictest.Text("Good session. See you next week.", 4), anthropictest.Text("Welcome back.", 4))
		var c completion
		r := e.post(e.alice.key, "/v1/chat/completions", oaiBody("wrap up"), nil, &c)
		sid := r.header.Get("X-Coachd-Session-Id")
		complete(sid)
		r = e.post(e.alice.key, "/v1/chat/completions", oaiBody("wrap up", c.Choices[0].Message.Content, "I'm back"), nil, &c)
		if got := r.header.Get("X-Coachd-Session-Id"); r.status != 200 || got == sid || c.Choices[0].Message.Content != "Welcome back." {
			t.Fatalf("after the session completed: %d %s (session %s, was %s)", r.status, r.body, got, sid)
		}
		named := e.post(e.alice.key, "/v1/chat/completions", oaiBody("hi"), map[string]string{"X-Coachd-Session-Id": sid}, nil)
		if named.status != 409 {
			t.Errorf("the completed session named: %d %s", named.status, named.body)
		}
		// The SDKs retry a 409 twice by themselves; this one would be
		// refused again, so they are told not to.
		if got := named.header.Get("X-Should-Retry"); got != "false" {
			t.Errorf("X-Should-Retry %q on the completed session's 409, want false", got)
		}
	})
	t.Run("UIChat", func(t *testing.T) {
		e.fake.Enqueue(anthropictest.Text("Good session.", 4), anthropictest.Text("Welcome back.", 4), anthropictest.Text("Again.", 4))
		a := e.chat(t.Context(), e.alice.key, "?protocol=ai-sdk", uiChatBody("chat-done", `{"type":"text","text":"wrap up"}`))
		sid := a.header.Get("X-Coachd-Session-Id")
		complete(sid)
		b := e.chat(t.Context(), e.alice.key, "?protocol=ai-sdk", uiChatBody("chat-done", `{"type":"text","text":"I'm back"}`))
		if got := b.header.Get("X-Coachd-Session-Id"); b.status != 200 || got == "" || got == sid {
			t.Fatalf("after the session completed: %d %s (session %s, was %s)", b.status, b.raw, got, sid)
		}
		c := e.chat(t.Context(), e.alice.key, "?protocol=ai-sdk", uiChatBody("chat-done", `{"type":"text","text":"and again"}`))
		if c.header.Get("X-Coachd-Session-Id") != b.header.Get("X-Coachd-Session-Id") {
			t.Errorf("the chat did not stay in its new session")
		}
	})
}

// TestOpenAIBusyRetried: a 409 for a turn still running on the named
// session ends when that turn does, so the SDKs' own retries are left
// alone (no X-Should-Retry), unlike a completed session's.
func TestOpenAIBusyRetried(t *testing.T) {
	e := MustChatEnv(t, nil)
	sess := e.MustSession(e.alice)
	e.fake.Enqueue(anthropictest.Text("This one hangs", 4).StallAfter(4))
	ctx, cancel := context.WithCancel(t.Context())
	first := make(chan stream, 1)
	go func() {
		first <- e.tryChat(ctx, e.alice.key, "?on_disconnect=cancel", `{"message":"one","session_id":"`+sess.ID+`"}`)
	}()
	waitFor(t, func() bool { return len(e.fake.Requests()) == 1 })
	r := e.post(e.alice.key, "/v1/chat/completions", oaiBody("two"), map[string]string{"X-Coachd-Session-Id": sess.ID}, nil)
	cancel()
	<-first
	if r.status != 409 || !strings.Contains(string(r.body), coachd.ETURNINPROGRESS) {
		t.Fatalf("during a turn: %d %s", r.status, r.body)
	}
	if got := r.header.Get("X-Should-Retry"); got != "" {
		t.Errorf("X-Should-Retry %q on a turn in progress, want none", got)
	}
}

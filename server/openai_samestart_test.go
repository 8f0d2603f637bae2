package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// stopAfterFirstText streams a completion of msgs and stops it (a chat
// UI's Stop) once the first text arrives; it returns that text and the
// session, once the turn's end is stored.
func (e *chatEnv) stopAfterFirstText(t *testing.T, msgs ...string) (partial, sid string) {
	t.Helper()
	var body map[string]any
	json.Unmarshal([]byte(oaiBody(msgs...)), &body)
	body["stream"] = true
	b, _ := json.Marshal(body)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", e.url+"/v1/chat/completions", strings.NewReader(string(b)))
	req.Header.Set("Authorization", "Bearer "+e.alice.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sid = resp.Header.Get("X-Coachd-Session-Id")
	sc := bufio.NewScanner(resp.Body)
	for partial == "" && sc.Scan() {
		var c struct {
			Choices []struct{ Delta struct{ Content string } }
		}
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && json.Unmarshal([]byte(data), &c) == nil && len(c.Choices) > 0 {
			partial = c.Choices[0].Delta.Content
		}
	}
	cancel()
	resp.Body.Close()
	if partial == "" {
		t.Fatal("no text before the stop")
	}
	waitFor(t, func() bool {
		r := e.do(request{method: "GET", path: "/v1/sessions/" + sid, key: e.alice.key})
		return r.status == 200 && !strings.Contains(string(r.body), `"running_turn"`) && strings.Contains(string(r.body), `"message_count":2`)
	})
	return partial, sid
}

// TestOpenAISameFirstMessage: two conversations of a user open with the
// same message. The first gets no whole reply (the model failed before
// its first word, or the user stopped it); the second gets one. The
// first conversation's next message, with no reply or the words it
// kept, must not go on after the second's reply: the fingerprint of
// that opening message names the second session by then, and coachd
// continued it, so the model answered the first conversation as if it
// had said the second's reply. The second conversation goes on in its
// session.
func TestOpenAISameFirstMessage(t *testing.T) {
	for _, stopped := range []bool{false, true} {
		t.Run(map[bool]string{false: "NoReply", true: "Stopped"}[stopped], func(t *testing.T) {
			e := MustChatEnv(t, nil)
			var first []string // the first conversation as its client shows it
			if stopped {
				e.fake.Enqueue(anthropictest.Text("Airport first, then the long way round", 4).StallAfter(6))
				partial, _ := e.stopAfterFirstText(t, "Plan my night")
				first = []string{"Plan my night", partial, "Go on"}
			} else {
				e.fake.Enqueue(anthropictest.Text("never sent", 4).ErrorAfter(0, "", ""))
				if r := e.post(e.alice.key, "/v1/chat/completions", oaiBody("Plan my night"), nil, nil); r.status != 503 {
					t.Fatalf("the failed turn: %d %s", r.status, r.body)
				}
				first = []string{"Plan my night", "", "Are you there?"}
			}
			e.fake.Enqueue(anthropictest.Text("Downtown first.", 4), anthropictest.Text("Here.", 4), anthropictest.Text("Welcome.", 4))
			r := e.post(e.alice.key, "/v1/chat/completions", oaiBody("Plan my night"), nil, nil)
			second := r.header.Get("X-Coachd-Session-Id")
			if r.status != 200 {
				t.Fatalf("the second conversation: %d %s", r.status, r.body)
			}
			// The first conversation's next message (a client that got no
			// reply sends none).
			body := oaiBody(first...)
			if !stopped {
				body = strings.Replace(body, `{"content":"","role":"assistant"},`, "", 1)
			}
			if r := e.post(e.alice.key, "/v1/chat/completions", body, nil, nil); r.status != 200 || r.header.Get("X-Coachd-Session-Id") == second {
				t.Errorf("the first conversation went on in the second's session: %d %s", r.status, r.body)
			}
			if r := e.post(e.alice.key, "/v1/chat/completions", oaiBody("Plan my night", "Downtown first.", "Thanks"), nil, nil); r.status != 200 ||
				r.header.Get("X-Coachd-Session-Id") != second {
				t.Errorf("the second conversation went on in %s, not %s", r.header.Get("X-Coachd-Session-Id"), second)
			}
			reqs := e.fake.Requests()
			got := modelTexts(&reqs[len(reqs)-2])
			if slices.Contains(got, "assistant: Downtown first.") || !strings.HasPrefix(got[0], "user: Plan my night") || !strings.HasSuffix(got[len(got)-1], first[2]) {
				t.Errorf("the first conversation's history: %q", got)
			}
			if got, want := modelTexts(&reqs[len(reqs)-1]), []string{"user: Plan my night", "assistant: Downtown first.", "user: Thanks"}; !slices.Equal(got, want) {
				t.Errorf("the second conversation's history: %q, want %q", got, want)
			}
		})
	}
}

// TestOpenAISameConversationTwoChats: two chats of a user open with the
// same message and get the same reply, so both conversations name one
// session by their fingerprint. One goes on by its messages (a client
// that keeps no session id), the other by the session it was told
// (X-Coachd-Session-Id): neither may see the other's later messages, in
// the model's history or in the session the other chat was given.
func TestOpenAISameConversationTwoChats(t *testing.T) {
	e := MustChatEnv(t, nil)
	e.fake.Enqueue(anthropictest.Text("Hello.", 4), anthropictest.Text("Hello.", 4),
		anthropictest.Text("Airport first.", 4), anthropictest.Text("Lunch at noon.", 4))
	post := func(body string, header map[string]string) string {
		t.Helper()
		r := e.post(e.alice.key, "/v1/chat/completions", body, header, nil)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", body, r.status, r.body)
		}
		return r.header.Get("X-Coachd-Session-Id")
	}
	post(oaiBody("Hi"), nil)      // chat A
	b := post(oaiBody("Hi"), nil) // chat B
	post(oaiBody("Hi", "Hello.", "Where first?"), nil)
	if got := post(oaiBody("Hi", "Hello.", "And lunch?"), map[string]string{"X-Coachd-Session-Id": b}); got != b {
		t.Errorf("chat B went on in %s, not its session %s", got, b)
	}
	reqs := e.fake.Requests()
	if got, want := modelTexts(&reqs[3]), []string{"user: Hi", "assistant: Hello.", "user: And lunch?"}; !slices.Equal(got, want) {
		t.Errorf("chat B's history: %q, want %q", got, want)
	}
	hist, err := e.db.History(t.Context(), e.alice.ID, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range hist {
		if m.Content == "Where first?" || m.Content == "Airport first." {
			t.Errorf("chat B's session holds chat A's %q", m.Content)
		}
	}
}

// TestOpenAISameQuestionTwoChats: two chats open alike and the coach asks
// both the same numbered question; the answer of the chat that goes on
// by its messages, in a copy of the session, still answers the question
// as the tool's result.
func TestOpenAISameQuestionTwoChats(t *testing.T) {
	e := MustChatEnv(t, nil)
	ask := func() anthropictest.Reply {
		return anthropictest.Blocks(anthropictest.TextBlock("Where to?", 4),
			anthropictest.ToolUse("toolu_o", "show_options", `{"prompt":"Pick a zone","options":["Airport","Downtown"]}`))
	}
	e.fake.Enqueue(ask(), ask(), anthropictest.Text("Downtown it is.", 4))
	var c completion
	for range 2 {
		if r := e.post(e.alice.key, "/v1/chat/completions", oaiBody("where should I drive?"), nil, &c); r.status != 200 {
			t.Fatalf("pause: %d %s", r.status, r.body)
		}
	}
	r := e.post(e.alice.key, "/v1/chat/completions", oaiBody("where should I drive?", c.Choices[0].Message.Content, "2"), nil, &c)
	if r.status != 200 || c.Choices[0].Message.Content != "Downtown it is." {
		t.Fatalf("answer: %d %s", r.status, r.body)
	}
	reqs := e.fake.Requests()
	if res := reqs[len(reqs)-1].ToolResults(); len(res) != 1 || res[0].ResultText() != "Downtown" || res[0].IsError {
		t.Errorf("the tool's result: %+v", res)
	}
}

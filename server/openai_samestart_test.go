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

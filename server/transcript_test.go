package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/client"
	"github.com/coachd/coachd/server"
)

func (e *voiceEnv) transcript(key, sessionID, body string) response {
	e.t.Helper()
	return e.post(key, "/v1/sessions/"+sessionID+"/messages", body, nil, nil)
}

// Transcripts a voice client posts are stored in the session, and the text
// coach's next request carries them in a history the API accepts.
func TestTranscripts(t *testing.T) {
	e := mustVoiceEnv(t, server.Limits{}, voiceKey)
	ctx := context.Background()
	key := e.alice.key
	t.Run("SeenByTheTextCoach", func(t *testing.T) {
		sess, err := e.alice.c.CreateSession(ctx, "", "voice")
		if err != nil {
			t.Fatal(err)
		}
		// The coach speaks first, then the driver, then the coach twice
		// (two transcript pieces of one reply).
		for _, body := range []string{
			`{"role":"assistant","content":"Hi! Where are you driving tonight?","source":"voice"}`,
			`{"role":"user","content":"Downtown Dallas, near the arena.","source":"voice"}`,
			`{"role":"assistant","content":"The game ends at ten.","source":"voice"}`,
			`{"role":"assistant","content":"Be at the north exit by 9:50.","source":"voice"}`,
		} {
			if r := e.transcript(key, sess.ID, body); r.status != http.StatusCreated {
				t.Fatalf("%s = %d %s", body, r.status, r.body)
			}
		}
		msgs, _, err := e.alice.c.Messages(ctx, sess.ID, coachd.Page{})
		if err != nil || len(msgs) != 5 || msgs[0].Content != agent.VoiceStartText {
			t.Fatalf("stored %+v %v", msgs, err)
		}
		for _, m := range msgs {
			var meta map[string]string
			if json.Unmarshal(m.Metadata, &meta) != nil || meta["source"] != "voice" {
				t.Fatalf("metadata %s", m.Metadata)
			}
		}
		e.fake.Enqueue(anthropictest.Text("Yes, the north exit.", 5))
		s := e.chat(ctx, key, "", `{"session_id":"`+sess.ID+`","message":"Which exit again?"}`)
		if s.status != 200 || len(s.named("message_end")) != 1 {
			t.Fatalf("turn = %d %s", s.status, s.raw)
		}
		reqs := e.fake.Requests()
		got := reqs[len(reqs)-1].Messages()
		var roles, texts []string
		for _, m := range got {
			roles = append(roles, string(m.Role))
			for _, b := range m.Blocks {
				texts = append(texts, b.Text)
			}
		}
		if strings.Join(roles, ",") != "user,assistant,user,assistant,user" {
			t.Fatalf("roles %v", roles)
		}
		all := strings.Join(texts, "|")
		for _, want := range []string{"Where are you driving tonight?", "near the arena", "The game ends at ten.", "north exit by 9:50", "Which exit again?"} {
			if !strings.Contains(all, want) {
				t.Fatalf("the model did not see %q in %q", want, all)
			}
		}
		// A user transcript after the coach's reply joins the next turn.
		if r := e.transcript(key, sess.ID, `{"role":"user","content":"Thanks, heading there.","source":"voice"}`); r.status != http.StatusCreated {
			t.Fatalf("after a turn = %d %s", r.status, r.body)
		}
		e.fake.Enqueue(anthropictest.Text("Drive safe.", 5))
		if s := e.chat(ctx, key, "", `{"session_id":"`+sess.ID+`","message":"Anything else?"}`); s.status != 200 {
			t.Fatalf("turn = %d %s", s.status, s.raw)
		}
		reqs = e.fake.Requests()
		last := reqs[len(reqs)-1].Messages()
		if n := len(last); n != 7 || last[n-1].Role != coachd.RoleUser || last[n-2].Role != coachd.RoleAssistant {
			t.Fatalf("history %+v", last)
		}
	})
	t.Run("ErrOtherUsersSession", func(t *testing.T) {
		bobs, err := e.bob.c.CreateSession(ctx, "", "bob's")
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{bobs.ID, "sess_00000000000000000000000000", "nope"} {
			r := e.transcript(key, id, `{"role":"user","content":"hi","source":"voice"}`)
			if r.status != 404 || r.errorCode() != coachd.ENOTFOUND {
				t.Fatalf("%s = %d %s", id, r.status, r.body)
			}
		}
		if msgs, _, _ := e.bob.c.Messages(ctx, bobs.ID, coachd.Page{}); len(msgs) != 0 {
			t.Fatalf("bob's session holds %d messages", len(msgs))
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		sess, _ := e.alice.c.CreateSession(ctx, "", "bad")
		for body, field := range map[string]string{
			`{"role":"system","content":"x","source":"voice"}`:                                                     "role",
			`{"role":"user","content":"  ","source":"voice"}`:                                                      "content",
			`{"role":"user","content":"x","source":"text"}`:                                                        "source",
			`{"role":"user","content":"x"}`:                                                                        "source",
			`{"role":"user","content":"` + strings.Repeat("a", agent.MaxTranscriptChars+1) + `","source":"voice"}`: "content",
			`{"role":"user","content":[{"type":"text","text":"x"}],"source":"voice"}`:                              "content",
		} {
			r := e.transcript(key, sess.ID, body)
			if r.status != 400 || !strings.Contains(string(r.body), field) {
				t.Errorf("%.50s = %d %s", body, r.status, r.body)
			}
		}
	})
	t.Run("ErrTurnInProgress", func(t *testing.T) {
		sess, _ := e.alice.c.CreateSession(ctx, "", "busy")
		// The reply never ends by itself: the turn runs until we leave.
		e.fake.Enqueue(anthropictest.Text(strings.Repeat("word ", 40), 5).StallAfter(10))
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		var during response
		e.alice.c.ChatStream(cctx, client.ChatRequest{SessionID: sess.ID, Message: "go"}, client.StreamOptions{}, func(ev client.Event) error {
			if ev.Name == "content_delta" && during.status == 0 {
				during = e.transcript(key, sess.ID, `{"role":"user","content":"hello?","source":"voice"}`)
				cancel()
			}
			return nil
		})
		if during.status != http.StatusConflict || during.errorCode() != coachd.ETURNINPROGRESS {
			t.Fatalf("during a turn = %d %s", during.status, during.body)
		}
		// Once the turn is over the transcript is taken.
		if r := e.post(key, "/v1/sessions/"+sess.ID+"/stop", "", nil, nil); r.status/100 != 2 {
			t.Fatalf("stop = %d %s", r.status, r.body)
		}
		waitFor(t, func() bool {
			return e.transcript(key, sess.ID, `{"role":"user","content":"hello?","source":"voice"}`).status == http.StatusCreated
		})
	})
}

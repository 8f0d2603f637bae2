package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/server"
)

// invisibleLines are texts with nothing a reader sees: zero-width spaces
// and joiners, the BOM, a word joiner, bidi marks, combining marks with
// nothing to sit on, Hangul fillers. The voice provider's transcription
// can hand one back for a cough or silence.
var invisibleLines = []string{
	"\u200b",
	"\ufeff",
	"\u2060",
	" \u200b\u200c\u200d\u2060\ufeff ",
	"\u200e\u200f\u202a\u202c",
	"\u0301\u0308",
	"\u3164",
	"\t\u200b\n\u00ad",
}

// TestInvisibleMessagesRefused: a line of only invisible characters is as
// empty as one of spaces, at the transcript door, at the chat doors (coachd's and
// OpenAI's) and for speech: 400 on the field, nothing stored, nothing sent upstream.
func TestInvisibleMessagesRefused(t *testing.T) {
	e := mustVoiceEnv(t, server.Limits{}, voiceKey)
	key := e.alice.key
	sess := e.MustSession(e.alice)
	before := e.messages(t)
	providerBefore := len(e.provider.Requests())
	for _, text := range invisibleLines {
		q, _ := json.Marshal(text)
		r := e.post(key, "/v1/sessions/"+sess.ID+"/messages", `{"role":"user","content":`+string(q)+`,"source":"voice"}`, nil, nil)
		if r.status != 400 || r.errorCode() != coachd.EINVALID || !strings.Contains(string(r.body), `"content"`) {
			t.Errorf("transcript %+q = %d %s", text, r.status, r.body)
		}
		r = e.post(key, "/v1/chat/stream", `{"message":`+string(q)+`,"session_id":"`+sess.ID+`"}`, nil, nil)
		if r.status != 400 || r.errorCode() != coachd.EINVALID || !strings.Contains(string(r.body), `"message"`) {
			t.Errorf("chat %+q = %d %s", text, r.status, r.body)
		}
		// The OpenAI door answers in its own shape, on its own field.
		r = e.post(key, "/v1/chat/completions", `{"model":"rio","stream":true,"messages":[{"role":"user","content":`+string(q)+`}]}`, nil, nil)
		if r.status != 400 || !strings.Contains(string(r.body), `"param":"messages"`) {
			t.Errorf("chat completions %+q = %d %s", text, r.status, r.body)
		}
		r = e.post(key, "/v1/tts", `{"text":`+string(q)+`}`, nil, nil)
		if r.status != 400 || r.errorCode() != coachd.EINVALID || !strings.Contains(string(r.body), `"text"`) {
			t.Errorf("tts %+q = %d %s", text, r.status, r.body)
		}
	}
	if got := e.messages(t); got != before {
		t.Fatalf("%d invisible messages were stored", got-before)
	}
	if n := len(e.provider.Requests()) - providerBefore; n != 0 {
		t.Fatalf("%d invisible texts reached the voice provider", n)
	}
	t.Run("OK", func(t *testing.T) {
		// Words with a zero-width joiner or a combining accent in them are
		// words: stored as sent.
		for _, text := range []string{"caf\u0065\u0301 at five", "\U0001F468\u200d\U0001F373 cook", "\u200bhi"} {
			q, _ := json.Marshal(text)
			var m struct {
				Content string `json:"content"`
			}
			r := e.post(key, "/v1/sessions/"+sess.ID+"/messages", `{"role":"user","content":`+string(q)+`,"source":"voice"}`, nil, nil)
			if r.status != 201 || json.Unmarshal(r.body, &m) != nil || m.Content != text {
				t.Errorf("transcript %+q = %d %s", text, r.status, r.body)
			}
		}
	})
}

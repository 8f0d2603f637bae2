package server_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestNULInForeignBodies proves that a NUL (U+0000) in a string of an
// OpenAI chat completion body or of an AI SDK useChat body is a 400 naming
// the field, in that dialect's error shape, as in every strict body: not a
// 500 from PostgreSQL, whose TEXT cannot hold it, nor a NUL stored on
// SQLite.
func TestNULInForeignBodies(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		e := mustChatEnvOn(t, dsn)
		e.fake.Enqueue(anthropictest.Text("ok", 2), anthropictest.Text("ok", 2))
		const nul = `a\u0000b`

		t.Run("OpenAI", func(t *testing.T) {
			r := e.do(request{method: "POST", path: "/v1/chat/completions", key: e.alice.key,
				body: `{"model":"default","messages":[{"role":"user","content":"` + nul + `"}]}`})
			var got struct {
				Error struct{ Message, Type string } `json:"error"`
			}
			json.Unmarshal(r.body, &got)
			if want := "messages[0].content: must not contain NUL (U+0000) characters"; r.status != http.StatusBadRequest ||
				got.Error.Type != "invalid_request_error" || got.Error.Message != want {
				t.Errorf("got %d %s, want 400 invalid_request_error %q", r.status, r.body, want)
			}
		})

		t.Run("AISDK", func(t *testing.T) {
			r := e.do(request{method: "POST", path: "/v1/chat/stream?protocol=ai-sdk", key: e.alice.key,
				body:   `{"id":"chat-nul","messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"` + nul + `"}]}]}`,
				header: map[string]string{"Accept": "application/json"}})
			var got struct {
				Error struct {
					Code    string
					Details []struct{ Field, Code string }
				} `json:"error"`
			}
			json.Unmarshal(r.body, &got)
			want := "messages[0].parts[0].text"
			if r.status != http.StatusBadRequest || got.Error.Code != "invalid_request" || len(got.Error.Details) != 1 ||
				got.Error.Details[0].Field != want || got.Error.Details[0].Code != "nul" {
				t.Errorf("got %d %s, want 400 invalid_request naming %s", r.status, r.body, want)
			}
		})
	})
}

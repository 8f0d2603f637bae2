package server_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestSecurityUIChatResumeInput: GET /v1/chat/stream/{chat}/stream took
// any chat id up to 200 bytes to SQL. One with a NUL or bytes that are
// not UTF-8 (no chat can have one: useChat's id comes in strict JSON) was
// a 204 on SQLite and, on Postgres, a 400 with no field that named the
// store's query ("find fingerprint: …"). Now both refuse it at the edge,
// naming the field as the POST's strict JSON does; and another user's
// running chat is nothing to resume (204), as an unknown one is.
func TestSecurityUIChatResumeInput(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		e := mustChatEnvOn(t, dsn)
		json := map[string]string{"Accept": "application/json"}
		get := func(chat string) request {
			return request{method: "GET", path: "/v1/chat/stream/" + chat + "/stream?protocol=ai-sdk", key: e.alice.key, header: json}
		}
		e.mustRefuse(t, []badRequest{
			{"NUL", get("a%00b"), "chat", "nul"},
			{"NotUTF8", get("a%ffb"), "chat", "utf8"},
			{"TooLong", get(strings.Repeat("c", 201)), "chat", "length"},
		})
		// As useChat reads it (Accept: text/event-stream): the message,
		// as text, naming the field.
		r := e.do(request{method: "GET", path: "/v1/chat/stream/a%00b/stream?protocol=ai-sdk", key: e.alice.key})
		if r.status != 400 || !strings.HasPrefix(string(r.body), "chat: ") {
			t.Errorf("useChat's answer: %d %q", r.status, r.body)
		}

		t.Run("OtherUser", func(t *testing.T) {
			e.fake.Enqueue(anthropictest.Text("Head for the airport now.", 4).StallAfter(5))
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "POST", e.url+"/v1/chat/stream?protocol=ai-sdk",
				strings.NewReader(uiChatBody("chat-run", `{"type":"text","text":"Where to?"}`)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+e.alice.key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			// The turn runs once its first text has streamed.
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() && !strings.Contains(sc.Text(), `"text-delta"`) {
			}
			status := func(key string) int {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, "GET", e.url+"/v1/chat/stream/chat-run/stream?protocol=ai-sdk", nil)
				req.Header.Set("Authorization", "Bearer "+key)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			if got := status(e.alice.key); got != 200 {
				t.Fatalf("alice resuming her running chat: %d", got)
			}
			if got := status(e.bob.key); got != 204 {
				t.Errorf("bob resuming alice's running chat: %d, want 204", got)
			}
		})
	})
}

package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestOpenAIStreamFailsBeforeFirstChunk: a streamed completion whose turn
// fails before it produced anything (the model overloaded, or refusing
// the request) is answered with the error's HTTP status and OpenAI's
// error body, as OpenAI does: a 200 with an error chunk is not retried by
// the openai SDKs, and clients that check the status read it as success.
func TestOpenAIStreamFailsBeforeFirstChunk(t *testing.T) {
	body := `{"model":"default","stream":true,"messages":[{"role":"user","content":"go"}]}`
	for _, tc := range []struct {
		name   string
		reply  anthropictest.Reply
		status int
		typ    string
	}{
		{"Overloaded", anthropictest.Status(529, nil, ""), 503, "rate_limit_error"},
		{"Rejected", anthropictest.Status(400, nil, ""), 400, "invalid_request_error"},
		{"Upstream", anthropictest.Text("never sent", 4).ErrorAfter(0, "api_error", "boom"), 502, "api_error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := MustChatEnv(t, nil)
			e.fake.Enqueue(tc.reply)
			r := e.do(request{method: "POST", path: "/v1/chat/completions", key: e.alice.key, body: body})
			if r.status != tc.status || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
				t.Fatalf("%d %s: %s", r.status, r.header.Get("Content-Type"), r.body)
			}
			if typ, _ := oaiErrorOf(t, r); typ != tc.typ {
				t.Errorf("type %q, want %q: %s", typ, tc.typ, r.body)
			}
			if tc.status == 503 && r.header.Get("Retry-After") == "" {
				t.Errorf("no Retry-After: %v", r.header)
			}
			if r.header.Get("X-Coachd-Session-Id") == "" {
				t.Errorf("no session id: %v", r.header)
			}
		})
	}
	// A turn that succeeds is not held back: its first words reach the
	// client while the model is still answering (the fake stalls after
	// them until the client leaves).
	t.Run("FirstWordsStream", func(t *testing.T) {
		e := MustChatEnv(t, nil)
		e.fake.Enqueue(anthropictest.Text("The first words, then more", 4).StallAfter(5))
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "POST", e.url+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+e.alice.key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		var role, content bool
		sc := bufio.NewScanner(resp.Body)
		for !content && sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var c struct {
				Choices []struct {
					Delta struct{ Role, Content string }
				}
			}
			if err := json.Unmarshal([]byte(data), &c); err != nil || len(c.Choices) != 1 {
				t.Fatalf("not a chunk: %s", data)
			}
			role = role || c.Choices[0].Delta.Role == "assistant"
			content = c.Choices[0].Delta.Content != ""
		}
		if !role || !content {
			t.Errorf("role %v, content %v before the turn ended (%v)", role, content, sc.Err())
		}
	})
}

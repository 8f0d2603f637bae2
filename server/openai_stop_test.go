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

// TestOpenAIStoppedReplyContinues: a chat UI's Stop button (Open WebUI,
// LibreChat) cuts a streamed completion; the next message resends the
// conversation with what the UI kept of the cut reply, or without it.
// Either way it continues the same session, with its stored history: a
// review found it started a new, empty session instead, because only a
// reply read to its end was remembered.
func TestOpenAIStoppedReplyContinues(t *testing.T) {
	for _, kept := range []bool{true, false} {
		name := map[bool]string{true: "PartialKept", false: "PartialDropped"}[kept]
		t.Run(name, func(t *testing.T) {
			e := MustChatEnv(t, nil)
			e.fake.Enqueue(anthropictest.Text("A long answer that stops halfway", 4).StallAfter(6))
			ctx, cancel := context.WithCancel(t.Context())
			req, _ := http.NewRequestWithContext(ctx, "POST", e.url+"/v1/chat/completions",
				strings.NewReader(`{"model":"default","stream":true,"messages":[{"role":"user","content":"tell me"}]}`))
			req.Header.Set("Authorization", "Bearer "+e.alice.key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			sid := resp.Header.Get("X-Coachd-Session-Id")
			partial := ""
			sc := bufio.NewScanner(resp.Body)
			for partial == "" && sc.Scan() {
				var c struct {
					Choices []struct{ Delta struct{ Content string } }
				}
				if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && json.Unmarshal([]byte(data), &c) == nil && len(c.Choices) > 0 {
					partial = c.Choices[0].Delta.Content
				}
			}
			cancel() // Stop
			resp.Body.Close()
			if partial == "" {
				t.Fatal("no text before the stop")
			}
			waitFor(t, func() bool {
				r := e.do(request{method: "GET", path: "/v1/sessions/" + sid, key: e.alice.key})
				return r.status == 200 && !strings.Contains(string(r.body), `"running_turn"`) && strings.Contains(string(r.body), `"message_count":2`)
			})
			e.fake.Enqueue(anthropictest.Text("Going on.", 4))
			msgs := []map[string]string{{"role": "user", "content": "tell me"}}
			if kept {
				msgs = append(msgs, map[string]string{"role": "assistant", "content": partial})
			}
			b, _ := json.Marshal(map[string]any{"model": "default", "messages": append(msgs, map[string]string{"role": "user", "content": "go on"})})
			r := e.post(e.alice.key, "/v1/chat/completions", string(b), nil, nil)
			if r.status != 200 {
				t.Fatalf("next message: %d %s", r.status, r.body)
			}
			if got := r.header.Get("X-Coachd-Session-Id"); got != sid {
				reqs := e.fake.Requests()
				t.Errorf("the next message went to session %s, not the stopped one %s; the model saw %d messages", got, sid, len(reqs[len(reqs)-1].Messages()))
			}
		})
	}
}

package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// gateTool signals started when it runs, then waits for its context (the
// turn's, cancelled by Drain).
type gateTool struct{ started chan struct{} }

func (g gateTool) Definition() coachd.ToolDef {
	return coachd.ToolDef{Name: "gate", Description: "gate", Category: coachd.ToolInstant,
		InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (g gateTool) Execute(ctx context.Context, _ coachd.ToolCall, _ coachd.ToolEnv) (coachd.ToolResult, error) {
	close(g.started)
	<-ctx.Done()
	return coachd.ToolResult{}, ctx.Err()
}

// oaiDuringDrain posts an OpenAI chat completion whose turn is inside a
// tool call when the server drains (the shutdown grace ran out), and
// returns the raw answer.
func oaiDuringDrain(t *testing.T, stream bool) (int, string) {
	g := gateTool{started: make(chan struct{})}
	e := MustChatEnv(t, nil, g)
	e.fake.Enqueue(
		lookThenGate(),
		anthropictest.Text("never sent", 4),
	)
	body := `{"model":"default","stream":` + map[bool]string{true: "true", false: "false"}[stream] +
		`,"messages":[{"role":"user","content":"go"}]}`
	type answer struct {
		status int
		body   string
		err    error
	}
	got := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, e.url+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+e.alice.key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			got <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		got <- answer{resp.StatusCode, string(b), err}
	}()
	<-g.started
	e.api.Drain()
	a := <-got
	if a.err != nil {
		t.Fatalf("request: %v", a.err)
	}
	return a.status, a.body
}

// TestOpenAIStreamDrainSaysSo: a streamed completion cut by the server's
// drain (the shutdown's grace ran out) tells its client so, an error chunk
// with the shutdown's code before [DONE]. A review found a stream that just
// ended with [DONE], which reads to an OpenAI client as a whole reply.
func TestOpenAIStreamDrainSaysSo(t *testing.T) {
	status, body := oaiDuringDrain(t, true)
	if status != http.StatusOK || !strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Fatalf("%d %q", status, body)
	}
	i := strings.Index(body, `"error":{`)
	if i < 0 || !strings.Contains(body[i:], `"code":"server_shutdown"`) || strings.Contains(body, `"finish_reason":"stop"`) {
		t.Errorf("the stream cut by Drain does not end with the shutdown's error chunk:\n%s", body)
	}
}

// TestOpenAIDrainAnswersError: a non-streamed completion cut by the
// server's drain answers the shutdown's error in OpenAI's shape, 503 and
// retryable, not the empty 200 a review found.
func TestOpenAIDrainAnswersError(t *testing.T) {
	status, body := oaiDuringDrain(t, false)
	var v struct {
		Error struct {
			Code, Type, Message string
		}
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil || status != http.StatusServiceUnavailable ||
		v.Error.Code != "server_shutdown" || v.Error.Message == "" {
		t.Fatalf("Drain during a non-streamed completion: status %d, body %q (%v), want 503 and the shutdown's error", status, body, err)
	}
}

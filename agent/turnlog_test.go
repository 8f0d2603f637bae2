package agent_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/internal/syncbuf"
)

// TestTurnEndedLogsWhy: a turn the upstream refused (a revoked API key,
// an overloaded model) logged only "turn ended ... stop=error": nothing
// at any level said which error, so an operator whose every turn failed
// could not tell a bad key from an outage in the logs. The line now
// carries the error's code and its caller-safe message.
func TestTurnEndedLogsWhy(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	logs := &syncbuf.Buffer{}
	r := h.newRunner(nil, nil, func(c *agent.Config) {
		c.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	h.fake.Enqueue(anthropictest.Status(401, nil, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`))
	tr, err := r.Prepare(context.Background(), agent.TurnRequest{User: h.user, Message: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	res := tr.Run(context.Background(), &sink{})
	if res.StopReason != coachd.TurnError || res.Err == nil || res.Err.Code != coachd.EUPSTREAMAUTH {
		t.Fatalf("turn: %s %v", res.StopReason, res.Err)
	}
	var line string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, `msg="turn ended"`) {
			line = l
		}
	}
	if !strings.Contains(line, "error=auth") || !strings.Contains(line, "authentication_error") {
		t.Errorf("the turn's end does not say why:\n%s", logs)
	}
	if strings.Contains(logs.String(), "hello") {
		t.Errorf("the log holds the user's message:\n%s", logs)
	}
}

// TestTurnEndedLogsFirstText: with a slow upstream the log showed a
// turn's latency and nothing that told the model's wait from coachd's
// own time. The line now carries first_text_ms, the time to the first
// text, which a model that takes 300 ms to start cannot make shorter.
func TestTurnEndedLogsFirstText(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	logs := &syncbuf.Buffer{}
	r := h.newRunner(nil, nil, func(c *agent.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	})
	h.fake.Enqueue(anthropictest.Text("Slow to start, then quick.", 3).Paced(300*time.Millisecond, 0))
	tr, err := r.Prepare(context.Background(), agent.TurnRequest{User: h.user, Message: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if res := tr.Run(context.Background(), &sink{}); res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("turn: %s %v", res.StopReason, res.Err)
	}
	var line struct {
		Msg         string   `json:"msg"`
		FirstTextMS *float64 `json:"first_text_ms"`
	}
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, `"turn ended"`) {
			json.Unmarshal([]byte(l), &line)
		}
	}
	if line.FirstTextMS == nil || *line.FirstTextMS < 300 {
		t.Errorf("first_text_ms %v, want at least 300:\n%s", line.FirstTextMS, logs)
	}
}

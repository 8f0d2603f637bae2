package agent_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// lockedBuffer is a bytes.Buffer safe for a logger's concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestTurnEndedLogsWhy: a turn the upstream refused (a revoked API key,
// an overloaded model) logged only "turn ended ... stop=error": nothing
// at any level said which error, so an operator whose every turn failed
// could not tell a bad key from an outage in the logs. The line now
// carries the error's code and its caller-safe message.
func TestTurnEndedLogsWhy(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	logs := &lockedBuffer{}
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

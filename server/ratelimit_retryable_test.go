package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/client"
	"github.com/coachd/coachd/server"
)

// TestChatStreamRateRefusalRetryable: a message over the user's rate
// (requests per window) is refused with a 429 whose stream error says
// when to send it again (retry_after): it is retryable, as the rate is
// waited out, unlike the monthly allowance. A review found
// "retryable": false beside the retry_after, which tells a client that
// follows retryable never to send the message again.
func TestChatStreamRateRefusalRetryable(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{Rate: coachd.RateLimit{N: 1, Per: ratePer}})
	e.fake.SetScript(func(*anthropictest.Request) anthropictest.Reply { return anthropictest.Text("Hi!", 5) })
	body := fmt.Sprintf(`{"message":"hi","session_id":%q}`, e.session(e.alice))
	if s := e.chat(context.Background(), e.alice.key, "", body); s.status != http.StatusOK {
		t.Fatalf("first %d %s", s.status, s.errBody.body)
	}
	s := e.chat(context.Background(), e.alice.key, "", body)
	if s.status != http.StatusTooManyRequests {
		t.Fatalf("second %d %s, want 429", s.status, s.raw)
	}
	var got map[string]any
	ev, err := client.NewEventReader(bytes.NewReader(s.raw)).Next()
	if err != nil || ev.Name != "error" || json.Unmarshal(ev.Data, &got) != nil {
		t.Fatalf("the refusal is no error event: %s", s.raw)
	}
	if got["type"] != coachd.ERATELIMITED || got["retryable"] != true || got["retry_after"] == nil {
		t.Errorf("the rate's refusal: %s, want rate_limit_exceeded, retryable, with retry_after", s.raw)
	}
}

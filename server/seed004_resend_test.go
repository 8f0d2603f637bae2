package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/server"
)

// TestSeed004ResendMonthlyLimit: seed 004's client auto-retries a turn
// that met the model busy ("rate_limit": "Client should auto-retry after
// 2-5 seconds") and offers a retry button after an api_error; either way
// it sends the same {message, session_id} again, which coachd runs as
// the same message (stored once). Its monthly message limit ("Monthly
// message limit (50) reached", with usage and limit) counts messages: a
// resend was counted as one more, so a user the model kept busy ran out
// of messages they never sent.
func TestSeed004ResendMonthlyLimit(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{MonthlyMessages: 2})
	ctx := context.Background()
	e.fake.Enqueue(anthropictest.Text("Hello.", 8))
	first := e.chat(ctx, e.alice.key, "", `{"message":"hi","session_id":null}`)
	sid := first.header.Get("X-Coachd-Session-Id")
	body := `{"message":"plan my week","session_id":"` + sid + `"}`
	busy := anthropictest.Status(529, nil, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	e.fake.Enqueue(busy)
	if s := e.chat(ctx, e.alice.key, "", body); s.status != 200 || !strings.Contains(string(s.raw), `"type":"rate_limit"`) {
		t.Fatalf("the busy turn: %d\n%s", s.status, s.raw)
	}
	// The client's auto-retry meets the model busy again, then gets through.
	e.fake.Enqueue(busy)
	if s := e.chat(ctx, e.alice.key, "", body); s.status != 200 || !strings.Contains(string(s.raw), `"type":"rate_limit"`) {
		t.Fatalf("the first auto-retry: %d\n%s", s.status, s.raw)
	}
	e.fake.Enqueue(anthropictest.Text("Legs, push, pull.", 8))
	s := e.chat(ctx, e.alice.key, "", body)
	if s.status != 200 || !strings.Contains(string(s.raw), "event: message_end") {
		t.Fatalf("the second auto-retry, two messages sent of two: %d\n%s", s.status, s.raw)
	}
	// A third message is over the limit, with usage and limit.
	s = e.chat(ctx, e.alice.key, "", `{"message":"and next week?","session_id":"`+sid+`"}`)
	if s.status != 429 || !strings.Contains(string(s.raw), `"usage":2,"limit":2`) && !strings.Contains(string(s.raw), `"limit":2,"usage":2`) {
		t.Fatalf("a third message: %d\n%s", s.status, s.raw)
	}
}

package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/server"
)

// TestTranscriptRateLimit proves that POST /v1/sessions/{id}/messages is
// rate limited per user, in a bucket of its own at twice the turn rate
// (a driver's line and the coach's per spoken exchange): past it is the
// 429 rate_limit_exceeded of the other limits, with Retry-After, usage
// and limit, and nothing is stored; the user's turns are not used up,
// and another user's transcripts are their own.
func TestTranscriptRateLimit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		e := mustVoiceEnvOn(t, dsn, server.Limits{Rate: coachd.RateLimit{N: 2, Per: time.Hour}}, voiceKey)
		ctx := context.Background()
		sess, err := e.alice.c.CreateSession(ctx, "", "voice")
		if err != nil {
			t.Fatal(err)
		}
		line := `{"role":"user","content":"Heading to the airport.","source":"voice"}`
		for i := range 4 {
			if r := e.transcript(e.alice.key, sess.ID, line); r.status != http.StatusCreated {
				t.Fatalf("transcript %d = %d %s", i, r.status, r.body)
			}
		}
		r := e.transcript(e.alice.key, sess.ID, line)
		var b struct{ Error map[string]any }
		_ = json.Unmarshal(r.body, &b)
		if r.status != http.StatusTooManyRequests || r.errorCode() != coachd.ERATELIMITED || r.header.Get("Retry-After") == "" ||
			b.Error["usage"] != 4.0 || b.Error["limit"] != 4.0 {
			t.Fatalf("fifth transcript = %d %v %s, want 429 rate_limit_exceeded with usage 4, limit 4", r.status, r.header, r.body)
		}
		if msgs, _, err := e.alice.c.Messages(ctx, sess.ID, coachd.Page{}); err != nil || len(msgs) != 4 {
			t.Fatalf("stored %d messages %v, want 4", len(msgs), err)
		}
		// The turns are a bucket apart.
		e.fake.Enqueue(anthropictest.Text("Terminal B.", 5))
		if s := e.chat(ctx, e.alice.key, "", `{"session_id":"`+sess.ID+`","message":"Which terminal?"}`); s.status != 200 {
			t.Fatalf("turn after the transcripts = %d %s", s.status, s.raw)
		}
		bobs, err := e.bob.c.CreateSession(ctx, "", "bob's")
		if err != nil {
			t.Fatal(err)
		}
		if r := e.transcript(e.bob.key, bobs.ID, line); r.status != http.StatusCreated {
			t.Fatalf("bob's transcript = %d %s", r.status, r.body)
		}
	})
}

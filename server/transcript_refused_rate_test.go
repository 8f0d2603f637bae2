package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/client"
	"github.com/coachd/coachd/server"
)

// TestTranscriptRefusedNotCounted: a transcript refused because a turn
// runs on the session (409, which invites a retry once it ends) is not
// counted against the transcript rate, as a refused turn is not counted
// against the turn rate. Each refusal used up the bucket, so that the
// voice client's words after the turn were 429 and lost.
func TestTranscriptRefusedNotCounted(t *testing.T) {
	e := mustVoiceEnv(t, server.Limits{Rate: coachd.RateLimit{N: 1, Per: time.Hour}}, voiceKey) // 2 transcripts an hour
	ctx := context.Background()
	key := e.alice.key
	sess, err := e.alice.c.CreateSession(ctx, "", "busy")
	if err != nil {
		t.Fatal(err)
	}
	line := `{"role":"user","content":"Heading to the airport.","source":"voice"}`
	e.fake.Enqueue(anthropictest.Text(strings.Repeat("word ", 40), 5).StallAfter(10))
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var during []response
	e.alice.c.ChatStream(cctx, client.ChatRequest{SessionID: sess.ID, Message: "go"}, client.StreamOptions{}, func(ev client.Event) error {
		if ev.Name == "content_delta" && len(during) == 0 {
			for range 2 {
				during = append(during, e.transcript(key, sess.ID, line))
			}
			cancel()
		}
		return nil
	})
	for i, r := range during {
		if r.status != http.StatusConflict {
			t.Fatalf("transcript %d during the turn = %d %s, want 409", i, r.status, r.body)
		}
	}
	if len(during) != 2 {
		t.Fatalf("%d transcripts during the turn", len(during))
	}
	if r := e.post(key, "/v1/sessions/"+sess.ID+"/stop", "", nil, nil); r.status/100 != 2 {
		t.Fatalf("stop = %d %s", r.status, r.body)
	}
	var after response
	waitFor(t, func() bool {
		after = e.transcript(key, sess.ID, line)
		return after.status != http.StatusConflict
	})
	if after.status != http.StatusCreated {
		t.Fatalf("transcript after the turn = %d %s, want 201", after.status, after.body)
	}
}

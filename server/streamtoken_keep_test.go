package server_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/client"
)

// TestStreamTokenSurvivesUserEdit: a session stream opened with a stream
// token ends when its user's key is rotated or revoked
// (TestStreamEndsWhenKeyRevoked), not when an admin edits the user (a
// budget top-up): the owner's next turn still reaches it. Ended, an
// EventSource could not come back once its token (10 minutes) expired.
func TestStreamTokenSurvivesUserEdit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		e := mustChatEnvOn(t, dsn)
		ctx := context.Background()
		sess := e.MustSession(e.alice)
		r := e.post(e.alice.key, "/v1/sessions/"+sess.ID+"/stream-token", ``, nil, nil)
		var tok struct {
			StreamURL string `json:"stream_url"`
		}
		if err := json.Unmarshal(r.body, &tok); r.status != 201 || err != nil {
			t.Fatalf("mint: %d %s", r.status, r.body)
		}
		got := make(chan []client.Event, 1)
		attached := make(chan struct{})
		go func() {
			evs, _ := e.followAttached(ctx, t, tok.StreamURL, "", "", "message_end", attached)
			got <- evs
		}()
		<-attached
		if r := e.do(request{method: "PATCH", path: "/v1/users/" + e.alice.ID, key: adminKey, body: `{"token_budget":200000}`}); r.status != 200 {
			t.Fatalf("top-up: %d %s", r.status, r.body)
		}
		e.fake.Enqueue(anthropictest.Text("Still yours.", 4))
		if s := e.chat(ctx, e.alice.key, "", `{"message":"hi","session_id":"`+sess.ID+`"}`); s.status != 200 {
			t.Fatalf("turn: %d %s", s.status, s.raw)
		}
		select {
		case evs := <-got:
			if textOf(evs) != "Still yours." {
				t.Errorf("the token stream after a budget top-up read %q, want the turn", textOf(evs))
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the token stream neither ended nor read the turn")
		}
	})
}

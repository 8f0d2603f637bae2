package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/client"
	"github.com/coachd/coachd/server"
)

// TestStreamEndsWhenKeyRevoked: a session stream opened with a key (or a
// stream token minted with it) does not outlive the key. Once the key is
// rotated (a leaked key's remedy), the owner's next turn must not reach
// the streams opened with the old credentials: they end instead, and
// reconnecting with them is refused.
func TestStreamEndsWhenKeyRevoked(t *testing.T) {
	e := MustChatEnv(t, nil)
	ctx := context.Background()
	sess := e.MustSession(e.alice)
	_, streamURL := e.mintStreamToken(t, e.alice.key, sess.ID)
	paths := map[string][2]string{
		"key":   {"/v1/sessions/" + sess.ID + "/stream", e.alice.key},
		"token": {streamURL, ""},
	}
	got := map[string]chan []client.Event{}
	for name, p := range paths {
		c := make(chan []client.Event, 1)
		got[name] = c
		attached := make(chan struct{})
		go func() {
			evs, _ := e.followAttached(ctx, t, p[0], p[1], "", "message_end", attached)
			c <- evs
		}()
		<-attached
	}
	newKey := server.NewAPIKey()
	if err := e.db.SetUserKey(ctx, e.alice.ID, server.HashAPIKey(newKey)); err != nil {
		t.Fatal(err)
	}
	e.fake.Enqueue(anthropictest.Text("Only the key holder reads this.", 4))
	if s := e.chat(ctx, newKey, "", `{"message":"hi","session_id":"`+sess.ID+`"}`); s.status != 200 || textOf(s.events) != "Only the key holder reads this." {
		t.Fatalf("the turn with the new key: %d %s", s.status, s.raw)
	}
	for name, p := range paths {
		select {
		case evs := <-got[name]:
			if len(evs) > 0 {
				t.Errorf("the stream opened with the old %s read the new key's turn: %q", name, textOf(evs))
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("the stream opened with the old %s neither ended nor read the turn", name)
		}
		if _, status := e.follow(ctx, t, p[0], p[1], "", ""); status != 401 {
			t.Errorf("reconnecting with the old %s: %d", name, status)
		}
	}
}

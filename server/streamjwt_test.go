package server_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/client"
	"github.com/coachd/coachd/server"
)

// TestStreamEndsWhenJWTExpires: a session stream opened with an identity
// provider's token does not outlive the token. Once it has expired, the
// user's next turn (signed in again with a fresh token) must not reach the
// stream opened with the old one: it ends instead, and reconnecting with
// the old token is refused, as for a rotated key.
func TestStreamEndsWhenJWTExpires(t *testing.T) {
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(rsaJWKS(rk))
	}))
	defer jwks.Close()
	clock := &movingClock{t: time.Now()}
	e := mustChatEnvDeps(t, func(d *server.Deps) {
		d.Clock = clock
		d.Limits = server.Limits{DefaultBudget: 100000}
		d.JWT = &server.JWTConfig{JWKSURL: jwks.URL, Issuer: "https://id.example.com", Audience: "coachd"}
	}, nil)
	token := func(ttl time.Duration) string {
		return sign(t, map[string]any{"alg": "RS256", "kid": "r1"}, map[string]any{"iss": "https://id.example.com",
			"aud": "coachd", "sub": "user-7", "exp": clock.Now().Add(ttl).Unix()}, rk)
	}
	ctx := context.Background()
	old := token(2 * time.Minute)
	sess, err := client.New(e.url, old, nil).CreateSession(ctx, "", "")
	if err != nil {
		t.Fatal(err)
	}
	path := "/v1/sessions/" + sess.ID + "/stream"
	got := make(chan []client.Event, 1)
	attached := make(chan struct{})
	go func() {
		evs, _ := e.followAttached(ctx, t, path, old, "", "message_end", attached)
		got <- evs
	}()
	<-attached
	clock.Add(5 * time.Minute) // the old token expired, leeway and all
	e.fake.Enqueue(anthropictest.Text("Only the signed-in user reads this.", 4))
	if s := e.chat(ctx, token(time.Hour), "", `{"message":"hi","session_id":"`+sess.ID+`"}`); s.status != 200 || textOf(s.events) != "Only the signed-in user reads this." {
		t.Fatalf("the turn with a fresh token: %d %s", s.status, s.raw)
	}
	select {
	case evs := <-got:
		if len(evs) > 0 {
			t.Errorf("the stream opened with the expired token read the next turn: %q", textOf(evs))
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the stream opened with the expired token neither ended nor read the turn")
	}
	if _, status := e.follow(ctx, t, path, old, "", ""); status != 401 {
		t.Errorf("reconnecting with the expired token: %d", status)
	}
}

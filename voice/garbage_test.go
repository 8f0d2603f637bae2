package voice_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/voice"
)

// garbageProvider answers every client secret request 200 with body.
func garbageProvider(t *testing.T, body string) *voice.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return voice.New(voice.Config{APIKey: key, BaseURL: srv.URL, HTTPClient: srv.Client()})
}

// TestMintGarbageAnswer: a provider that answers 200 with nonsense in the
// fields coachd passes on (an expiry in milliseconds, a model with a
// terminal escape, a voice it does not have) must not reach the client:
// the expiry was taken as the year 50000 (the answer could not even be
// encoded, a 500 after the secret was recorded), the model and voice
// were echoed and stored as sent.
func TestMintGarbageAnswer(t *testing.T) {
	ctx := context.Background()
	t.Run("ErrExpiryMillis", func(t *testing.T) {
		ms := time.Now().Add(10 * time.Minute).UnixMilli()
		c := garbageProvider(t, fmt.Sprintf(`{"value":"ek_x1","expires_at":%d}`, ms))
		s, err := c.Mint(ctx, voice.SessionRequest{})
		if coachd.ErrorCode(err) != coachd.EAPI {
			t.Fatalf("secret %+v, err %v; want %s", s, err, coachd.EAPI)
		}
	})
	t.Run("ErrExpiryPast", func(t *testing.T) {
		c := garbageProvider(t, fmt.Sprintf(`{"value":"ek_x1","expires_at":%d}`, time.Now().Add(-time.Hour).Unix()))
		s, err := c.Mint(ctx, voice.SessionRequest{})
		if coachd.ErrorCode(err) != coachd.EAPI {
			t.Fatalf("secret %+v, err %v; want %s", s, err, coachd.EAPI)
		}
	})
	t.Run("BadModelAndVoiceIgnored", func(t *testing.T) {
		exp := time.Now().Add(10 * time.Minute).Unix()
		model := "gpt\x1b[31m" + strings.Repeat("x", 5000)
		mj, _ := json.Marshal(model)
		c := garbageProvider(t, fmt.Sprintf(`{"value":"ek_x1","expires_at":%d,"session":{"model":%s,"audio":{"output":{"voice":"robot"}}}}`, exp, mj))
		s, err := c.Mint(ctx, voice.SessionRequest{Voice: "verse"})
		if err != nil {
			t.Fatal(err)
		}
		if s.Model != voice.DefaultModel || s.Voice != "verse" {
			t.Fatalf("secret model %.40q voice %q, want the requested %q %q", s.Model, s.Voice, voice.DefaultModel, "verse")
		}
	})
}

// TestMintLongerExpiryKept: a compatible provider that keeps its own
// lifetime (an hour, within the API's two) for a secret asked to last
// 10 s answers a usable secret; only an expiry past what any secret can
// last is garbage.
func TestMintLongerExpiryKept(t *testing.T) {
	exp := time.Now().Add(time.Hour).Unix()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"value":"ek_x1","expires_at":%d}`, exp)
	}))
	t.Cleanup(srv.Close)
	c := voice.New(voice.Config{APIKey: key, BaseURL: srv.URL, HTTPClient: srv.Client(), SecretTTL: 10 * time.Second})
	s, err := c.Mint(context.Background(), voice.SessionRequest{})
	if err != nil || s.ExpiresAt.Unix() != exp {
		t.Fatalf("secret %+v, err %v; want the provider's expiry", s, err)
	}
}

package anthropic_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic"
)

// TestSecurityVertexTokenEchoRedacted: Vertex's OAuth access token is
// added by Google's transport, below the SDK, so the request the SDK's
// error keeps has no Authorization: a gateway quoting the bearer token it
// was sent put the token in the log line of the failed call and, through
// the error type, in the client's error body.
func TestSecurityVertexTokenEchoRedacted(t *testing.T) {
	const token = "ya29.a0AfB_byCoachdVertexToken7pLs2Wn8Rb"
	for _, tt := range []struct {
		name  string
		reply func(w http.ResponseWriter, auth string)
	}{
		{"Status", func(w http.ResponseWriter, auth string) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"type":"error","error":{"type":"bad_token_%s","message":"invalid credentials: %s"}}`,
				strings.TrimPrefix(auth, "Bearer "), auth)
		}},
		{"ErrorEvent", func(w http.ResponseWriter, auth string) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error %s\",\"message\":\"%s is throttled\"}}\n\n",
				strings.TrimPrefix(auth, "Bearer "), auth)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			eachPath(t, func(t *testing.T, untraced bool) {
				var got string
				ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					got = r.Header.Get("Authorization")
					tt.reply(w, got)
				}))
				t.Cleanup(ts.Close)
				m, err := anthropic.NewVertex(context.Background(), anthropic.VertexConfig{
					Config: anthropic.Config{BaseURL: ts.URL, MaxRetries: -1, Untraced: untraced},
					Region: "us-east5", Project: "coachd-test",
					TokenSource: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token, TokenType: "Bearer"}),
				})
				if err != nil {
					t.Fatal(err)
				}
				_, _, err = drain(m.Stream(context.Background(), hello()))
				if got != "Bearer "+token {
					t.Fatalf("the endpoint saw Authorization %q", got)
				}
				var ce *coachd.Error
				if !errors.As(err, &ce) {
					t.Fatalf("err = %T %v", err, err)
				}
				if strings.Contains(ce.Message, token) || strings.Contains(err.Error(), token) {
					t.Errorf("the access token is in the error: message %q, log text %q", ce.Message, err.Error())
				}
				if !strings.Contains(err.Error(), "[redacted]") {
					t.Errorf("log text %q does not show where the token was", err.Error())
				}
			})
		})
	}
	t.Run("CountTokens", func(t *testing.T) {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprintf(w, `{"type":"error","error":{"type":"permission_error","message":"token %s"}}`, r.Header.Get("Authorization"))
		}))
		t.Cleanup(ts.Close)
		m, err := anthropic.NewVertex(context.Background(), anthropic.VertexConfig{
			Config: anthropic.Config{BaseURL: ts.URL, MaxRetries: -1},
			Region: "us-east5", Project: "coachd-test",
			TokenSource: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token, TokenType: "Bearer"}),
		})
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.CountTokens(context.Background(), hello())
		if err == nil || strings.Contains(err.Error(), token) {
			t.Errorf("the access token is in the error: %v", err)
		}
	})
}

package anthropic_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic"
)

// TestSecurityBedrockCredentialEchoRedacted: the SDK's Bedrock middleware
// adds the credential to the request it sends, not to the one the SDK's
// error keeps, so a gateway quoting what it was sent put it in the log
// line of the failed call and, through the error type, in the client's
// error body: a Bedrock API key (AWS_BEARER_TOKEN_BEDROCK, sent as a
// bearer token) or the session token of temporary AWS credentials.
func TestSecurityBedrockCredentialEchoRedacted(t *testing.T) {
	const (
		apiKey  = "ABSKQmVkcm9ja0FQSUtleS1jb2FjaGQtdGVzdA"
		session = "IQoJb3JpZ2luX2VjCoachdSessionToken7pLs2Wn8Rb"
	)
	for _, tt := range []struct {
		name, secret, header string
		env                  bool
	}{
		{"APIKey", apiKey, "Authorization", true},
		{"SessionToken", session, "X-Amz-Security-Token", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.env {
				t.Setenv("AWS_BEARER_TOKEN_BEDROCK", apiKey)
			}
			eachPath(t, func(t *testing.T, untraced bool) {
				var got string
				ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					got = r.Header.Get(tt.header)
					v := strings.TrimPrefix(got, "Bearer ")
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusForbidden)
					fmt.Fprintf(w, `{"type":"error","error":{"type":"denied_%s","message":"%s: %s"}}`, v, tt.header, got)
				}))
				t.Cleanup(ts.Close)
				m, err := anthropic.NewBedrock(context.Background(), anthropic.BedrockConfig{
					Config: anthropic.Config{BaseURL: ts.URL, MaxRetries: -1, Untraced: untraced},
					Region: "eu-central-1", AccessKeyID: "AKIDCOACHDTEST", SecretAccessKey: "not-a-secret", SessionToken: session,
				})
				if err != nil {
					t.Fatal(err)
				}
				_, _, err = drain(m.Stream(context.Background(), hello()))
				if !strings.Contains(got, tt.secret) {
					t.Fatalf("the endpoint saw %s %q", tt.header, got)
				}
				var ce *coachd.Error
				if !errors.As(err, &ce) {
					t.Fatalf("err = %T %v", err, err)
				}
				if strings.Contains(ce.Message, tt.secret) || strings.Contains(err.Error(), tt.secret) {
					t.Errorf("the credential is in the error: message %q, log text %q", ce.Message, err.Error())
				}
				if !strings.Contains(err.Error(), "[redacted]") {
					t.Errorf("log text %q does not show where the credential was", err.Error())
				}
			})
		})
	}
}

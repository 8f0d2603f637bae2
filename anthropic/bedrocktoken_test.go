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
	t.Run("APIKey", func(t *testing.T) {
		t.Setenv("AWS_BEARER_TOKEN_BEDROCK", apiKey)
		bedrockEcho(t, session, "Authorization", apiKey, false)
	})
	t.Run("SessionToken", func(t *testing.T) {
		bedrockEcho(t, session, "X-Amz-Security-Token", session, false)
	})
}

// TestSecurityBedrockCredentialEscapedEcho: AWS session tokens and Bedrock
// API keys are base64, "/" included, and a gateway answering in JSON as
// PHP writes it quotes each "/" as "\/": that spelling of the credential
// was left in the log line of the failed call.
func TestSecurityBedrockCredentialEscapedEcho(t *testing.T) {
	const session = "IQoJb3JpZ2luX2Vj//////////wEaDGV1LWNlbnRyYWwtMSJH/coachd+Rb"
	bedrockEcho(t, session, "X-Amz-Security-Token", session, true)
}

// bedrockEcho runs Bedrock (static keys with session) against an
// endpoint that echoes its header in a 403's error type and message
// (each "/" as "\/" if escape), and checks that secret is in neither the
// client's error nor the log text.
func bedrockEcho(t *testing.T, session, header, secret string, escape bool) {
	eachPath(t, func(t *testing.T, untraced bool) {
		var got string
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got = r.Header.Get(header)
			v := strings.TrimPrefix(got, "Bearer ")
			if escape {
				v = strings.ReplaceAll(v, "/", `\/`)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprintf(w, `{"type":"error","error":{"type":"denied_%s","message":"%s: %s"}}`, v, header, v)
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
		if !strings.Contains(got, secret) {
			t.Fatalf("the endpoint saw %s %q", header, got)
		}
		var ce *coachd.Error
		if !errors.As(err, &ce) {
			t.Fatalf("err = %T %v", err, err)
		}
		escaped := strings.ReplaceAll(secret, "/", `\/`)
		for _, v := range []string{secret, escaped} {
			if strings.Contains(ce.Message, v) || strings.Contains(err.Error(), v) {
				t.Errorf("the credential is in the error: message %q, log text %q", ce.Message, err.Error())
			}
		}
		if !strings.Contains(err.Error(), "[redacted]") {
			t.Errorf("log text %q does not show where the credential was", err.Error())
		}
	})
}

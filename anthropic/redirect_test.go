package anthropic_test

import (
	"context"
	"testing"

	"golang.org/x/oauth2"

	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/internal/redirecttest"
)

// TestSecurityRedirectNotFollowed: the clients followed a redirect from
// the configured base URL to another host, and net/http drops only
// Authorization there: the API key (x-api-key), Bedrock's session token
// (X-Amz-Security-Token) and Vertex's OAuth token (its transport adds it
// to every request, the redirected one too) reached that host, with the
// conversation. No platform redirects a Messages call: a redirect is
// refused with an error that says so.
func TestSecurityRedirectNotFollowed(t *testing.T) {
	const (
		apiKey  = "sk-ant-api03-coachdRedirectKey7pLs2Wn8Rb"
		session = "IQoJb3JpZ2luX2VjCoachdRedirectSession7pLs"
		token   = "ya29.a0AfB_byCoachdRedirectToken7pLs2Wn8Rb"
	)
	for _, tt := range []struct {
		name  string
		model func(t *testing.T, base string, untraced bool) *anthropic.Model
	}{
		{"Anthropic", func(t *testing.T, base string, untraced bool) *anthropic.Model {
			return anthropic.New(anthropic.Config{APIKey: apiKey, BaseURL: base, Untraced: untraced})
		}},
		{"Bedrock", func(t *testing.T, base string, untraced bool) *anthropic.Model {
			m, err := anthropic.NewBedrock(context.Background(), anthropic.BedrockConfig{
				Config: anthropic.Config{BaseURL: base, Untraced: untraced},
				Region: "eu-central-1", AccessKeyID: "AKIDCOACHDTEST", SecretAccessKey: "not-a-secret", SessionToken: session,
			})
			if err != nil {
				t.Fatal(err)
			}
			return m
		}},
		{"Vertex", func(t *testing.T, base string, untraced bool) *anthropic.Model {
			m, err := anthropic.NewVertex(context.Background(), anthropic.VertexConfig{
				Config: anthropic.Config{BaseURL: base, Untraced: untraced},
				Region: "us-east5", Project: "coachd-test",
				TokenSource: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token, TokenType: "Bearer"}),
			})
			if err != nil {
				t.Fatal(err)
			}
			return m
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			eachPath(t, func(t *testing.T, untraced bool) {
				p := redirecttest.New(t)
				_, _, err := drain(tt.model(t, p.URL, untraced).Stream(context.Background(), hello()))
				p.CheckRefused(t, err)
			})
		})
	}
}

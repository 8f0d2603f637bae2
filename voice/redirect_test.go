package voice_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/internal/redirecttest"
	"github.com/coachd/coachd/voice"
)

// TestSecurityRedirectNotFollowed: the client followed a redirect from
// the provider's URL to another host and sent it the request (a 307
// keeps the body: the agent's instructions, the text to speak); the key
// goes along to any host net/http deems the same domain. The provider
// redirects none of these calls: a redirect is refused with an error
// that says so.
func TestSecurityRedirectNotFollowed(t *testing.T) {
	for _, tt := range []struct {
		name string
		call func(c *voice.Client) error
	}{
		{"Mint", func(c *voice.Client) error {
			_, err := c.Mint(context.Background(), voice.SessionRequest{Instructions: "You are a rideshare coach."})
			return err
		}},
		{"Speech", func(c *voice.Client) error {
			_, _, err := c.Speech(context.Background(), voice.SpeechRequest{Text: "Hello"})
			return err
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := redirecttest.New(t)
			err := tt.call(voice.New(voice.Config{APIKey: key, BaseURL: p.URL}))
			if got := p.Got(); len(got) > 0 {
				t.Fatalf("the redirect was followed: the other host got %d requests, headers %v", len(got), got[0])
			}
			var ce *coachd.Error
			if !errors.As(err, &ce) || ce.Code != coachd.EAPI || !strings.Contains(ce.Message, "redirect") {
				t.Fatalf("err = %v, want an %s error that names the redirect", err, coachd.EAPI)
			}
			if !strings.Contains(err.Error(), "localhost") {
				t.Errorf("log text %q does not say where the redirect pointed", err.Error())
			}
		})
	}
}

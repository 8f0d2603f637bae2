package voice_test

import (
	"context"
	"testing"

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
			p.CheckRefused(t, err)
		})
	}
}

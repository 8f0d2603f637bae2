package openai_test

import (
	"context"
	"testing"

	"github.com/coachd/coachd/internal/redirecttest"
	"github.com/coachd/coachd/modeltest"
	"github.com/coachd/coachd/openai"
)

// TestSecurityRedirectNotFollowed: the client followed a redirect from
// the configured base URL to another host and sent it the conversation
// (a 307 keeps the body); the key goes along to any host net/http deems
// the same domain. No provider redirects a chat completion: a redirect is
// refused with an error that says so.
func TestSecurityRedirectNotFollowed(t *testing.T) {
	p := redirecttest.New(t)
	m := openai.New(openai.Config{BaseURL: p.URL + "/v1", APIKey: "sk-proj-coachdRedirectKey7pLs2Wn8Rb", Model: "gpt-5.1"})
	_, _, err := modeltest.Drain(m.Stream(context.Background(), modeltest.Hello("")))
	p.CheckRefused(t, err)
}

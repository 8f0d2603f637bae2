package openai_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/coachd/coachd"
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
}

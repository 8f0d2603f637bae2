package openai_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/modeltest"
	"github.com/coachd/coachd/openai"
	"github.com/coachd/coachd/openai/openaitest"
)

// toFake sends every request to srv's chat completions, whatever URL it
// names, and records the host it named.
type toFake struct {
	srv   *url.URL
	hosts []string
}

func (f *toFake) RoundTrip(r *http.Request) (*http.Response, error) {
	f.hosts = append(f.hosts, r.URL.Host)
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host, r.Host = f.srv.Scheme, f.srv.Host, f.srv.Host
	r.URL.Path = f.srv.Path + "/chat/completions"
	return http.DefaultTransport.RoundTrip(r)
}

// TestMaxCompletionTokens: OpenAI's own API refuses max_tokens for its
// current models (gpt-5.x, o-series: "Unsupported parameter: 'max_tokens'
// ... Use 'max_completion_tokens' instead"), so the limit goes there as
// max_completion_tokens; other servers (Ollama, vLLM, LiteLLM) keep
// max_tokens, which all of them read.
func TestMaxCompletionTokens(t *testing.T) {
	srv := MustServer(t)
	u, _ := url.Parse(srv.URL())
	req := &coachd.ModelRequest{Model: "gpt-5.1", MaxTokens: 300,
		Messages: []coachd.ModelMessage{{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("hi")}}}}
	for _, tc := range []struct {
		name, base, key, absent string
	}{
		{"OpenAI", openai.DefaultBaseURL, "max_completion_tokens", "max_tokens"},
		{"Azure", "https://acme.openai.azure.com/openai/v1", "max_completion_tokens", "max_tokens"},
		{"Other", "http://localhost:11434/v1", "max_tokens", "max_completion_tokens"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := &toFake{srv: u}
			m := openai.New(openai.Config{BaseURL: tc.base, MaxRetries: -1, HTTPClient: &http.Client{Transport: rt}})
			srv.Enqueue(openaitest.Text("Hi."))
			if _, _, err := modeltest.Drain(m.Stream(context.Background(), req)); err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			var got map[string]any
			json.Unmarshal(reqs[len(reqs)-1].Raw, &got)
			if got[tc.key] != 300.0 || got[tc.absent] != nil {
				t.Errorf("to %s: %s=%v, %s=%v", rt.hosts, tc.key, got[tc.key], tc.absent, got[tc.absent])
			}
		})
	}
}

package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
)

// TestSecurityPlatformBaseURLNoCredentials: an agent naming provider
// bedrock or vertex with a base_url had coachd sign for that URL, a host a
// pack picks, with its own cloud credentials: Bedrock's API key
// (AWS_BEARER_TOKEN_BEDROCK, a bearer token), an AWS session token, or
// Vertex's Google access token. Such a provider has no key of its own to
// send there: its base_url is refused and the host is never called.
func TestSecurityPlatformBaseURLNoCredentials(t *testing.T) {
	const own = "ABSKQmVkcm9ja0FQSUtleS1jb2FjaGQtb3du"
	t.Setenv("AWS_BEARER_TOKEN_BEDROCK", own)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDCOACHDOWN")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "coachd-own-secret")
	t.Setenv("AWS_SESSION_TOKEN", "coachd-own-session")
	var mu sync.Mutex
	var seen []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization")+" "+r.Header.Get("X-Amz-Security-Token"))
		mu.Unlock()
		http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"no"}}`, http.StatusNotFound)
	}))
	defer ts.Close()
	p := newProviders(modelConfig{}, getenvFrom(map[string]string{}), slog.New(slog.DiscardHandler))
	for _, spec := range []agent.Provider{
		{Name: agent.ProviderBedrock, Region: "eu-central-1", BaseURL: ts.URL},
		{Name: agent.ProviderVertex, Region: "us-east5", Project: "coachd-prod", BaseURL: ts.URL},
	} {
		m := p.For(&agent.Agent{Name: "pack", Provider: spec, Model: "claude-x"})
		s := m.Stream(context.Background(), &coachd.ModelRequest{Model: "claude-x", MaxTokens: 64,
			Messages: []coachd.ModelMessage{{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("hi")}}}})
		for s.Next() {
		}
		err := s.Err()
		s.Close()
		if err == nil || !strings.Contains(err.Error(), "base_url") {
			t.Errorf("%s: err = %v, want one naming base_url", spec.Name, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, h := range seen {
		t.Errorf("the pack's base_url was called with credentials %q", h)
	}
}

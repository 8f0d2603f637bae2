package main

import (
	"context"
	"log/slog"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/openai/openaitest"
)

// TestSecurityProviderBaseURLNoOwnKey: an agent naming provider openai
// with a base_url and no api_key_env had coachd send its own
// OPENAI_API_KEY to that URL, a host a pack picks. A pack's base_url now
// gets no key unless api_key_env names one (local servers take none).
func TestSecurityProviderBaseURLNoOwnKey(t *testing.T) {
	const own = "sk-own-openai-key-0123456789"
	fake := openaitest.NewServer()
	defer fake.Close()
	fake.Enqueue(openaitest.Text("Hello."))
	p := newProviders(modelConfig{}, getenvFrom(map[string]string{"OPENAI_API_KEY": own}), slog.New(slog.DiscardHandler))
	m := p.For(&agent.Agent{Name: "local", Provider: agent.Provider{Name: agent.ProviderOpenAI, BaseURL: fake.URL()}, Model: "llama3.1:8b"})
	s := m.Stream(context.Background(), &coachd.ModelRequest{Model: "llama3.1:8b", MaxTokens: 64,
		Messages: []coachd.ModelMessage{{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("hi")}}}})
	for s.Next() {
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	reqs := fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	if got := reqs[0].Header.Get("Authorization"); got != "" {
		t.Errorf("the pack's base_url received Authorization %q", got)
	}
}

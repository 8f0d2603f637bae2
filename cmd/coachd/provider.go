package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/openai"
)

// providers builds the models of agents that name a provider, one per
// distinct provider setting, from the provider's settings in the agent
// file and the server's environment (keys, regions, projects: never in a
// pack).
type providers struct {
	mc     modelConfig
	getenv func(string) string
	logger *slog.Logger

	mu     sync.Mutex
	models map[agent.Provider]coachd.Model
}

func newProviders(mc modelConfig, getenv func(string) string, logger *slog.Logger) *providers {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	return &providers{mc: mc, getenv: getenv, logger: logger, models: map[agent.Provider]coachd.Model{}}
}

// check builds every agent's model at startup, so a missing key or region
// stops coachd with the agent's name instead of failing its first turn.
func (p *providers) check(agents []*agent.Agent) error {
	for _, a := range agents {
		if a.Provider == (agent.Provider{}) {
			continue
		}
		if _, err := p.model(a.Provider); err != nil {
			return fmt.Errorf("agent %s: %w", a.Name, err)
		}
	}
	return nil
}

// For is agent.Config.ModelFor.
func (p *providers) For(a *agent.Agent) coachd.Model {
	m, err := p.model(a.Provider)
	if err != nil {
		return brokenModel{coachd.Errorf(coachd.EAPI, "agent %s: model provider: %v", a.Name, err)}
	}
	return m
}

func (p *providers) model(spec agent.Provider) (coachd.Model, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if m, ok := p.models[spec]; ok {
		return m, nil
	}
	m, err := p.build(spec)
	if err != nil {
		return nil, err
	}
	p.models[spec] = m
	return m, nil
}

func (p *providers) build(spec agent.Provider) (coachd.Model, error) {
	env := func(keys ...string) string {
		for _, k := range keys {
			if v := strings.TrimSpace(p.getenv(k)); v != "" {
				return v
			}
		}
		return ""
	}
	or := func(v string, keys ...string) string {
		if v != "" {
			return v
		}
		return env(keys...)
	}
	ctx := context.Background()
	log := p.logger.With("component", "model", "provider", spec.Name)
	timeout := p.mc.Timeout
	if spec.BaseURL != "" && (spec.Name == agent.ProviderBedrock || spec.Name == agent.ProviderVertex) {
		// Only a pack names one (agent.parseProvider refuses it too): the
		// SDK would sign for its host with coachd's own AWS or Google
		// credentials.
		return nil, fmt.Errorf("provider %s: base_url is for anthropic and openai; %s signs with coachd's own cloud credentials", spec.Name, spec.Name)
	}
	switch spec.Name {
	case agent.ProviderAnthropic:
		keyEnv := spec.APIKeyEnv
		if keyEnv == "" {
			keyEnv = "ANTHROPIC_API_KEY"
		}
		key := env(keyEnv)
		if key == "" {
			return nil, fmt.Errorf("provider anthropic needs %s", keyEnv)
		}
		base := or(spec.BaseURL, "ANTHROPIC_BASE_URL")
		log.Info("model provider ready", "base_url", maskDSN(base))
		return anthropic.New(anthropic.Config{APIKey: key, BaseURL: base, Model: p.mc.Model, Timeout: timeout, NoCache: p.mc.NoCache, Untraced: p.mc.untraced}), nil
	case agent.ProviderOpenAI:
		// Optional: local servers take none. coachd's own OPENAI_API_KEY
		// goes to OPENAI_BASE_URL only, never to a pack's base_url.
		var key string
		if spec.BaseURL == "" {
			key = env("OPENAI_API_KEY")
		}
		if spec.APIKeyEnv != "" {
			if key = env(spec.APIKeyEnv); key == "" {
				return nil, fmt.Errorf("provider openai: %s is not set", spec.APIKeyEnv)
			}
		}
		base := or(spec.BaseURL, "OPENAI_BASE_URL")
		log.Info("model provider ready", "base_url", maskDSN(base), "api_key", key != "")
		return openai.New(openai.Config{BaseURL: base, APIKey: key, Model: p.mc.openAIModel(), Timeout: timeout, Logger: log}), nil
	case agent.ProviderBedrock:
		m, err := anthropic.NewBedrock(ctx, anthropic.BedrockConfig{
			Config: anthropic.Config{BaseURL: spec.BaseURL, Model: p.mc.Model, Timeout: timeout, NoCache: p.mc.NoCache, Untraced: p.mc.untraced, Logger: log},
			Region: or(spec.Region, "AWS_REGION", "AWS_DEFAULT_REGION"),
		})
		if err != nil {
			return nil, err
		}
		if p.mc.CountTokens {
			log.Warn("model feature not available from this provider", "feature", "count_tokens",
				"reason", "Bedrock serves no count_tokens endpoint; budgets are estimated from request size")
		}
		log.Info("model provider ready", "region", or(spec.Region, "AWS_REGION", "AWS_DEFAULT_REGION"))
		return noCount{m}, nil
	case agent.ProviderVertex:
		region := or(spec.Region, "CLOUD_ML_REGION")
		project := or(spec.Project, "ANTHROPIC_VERTEX_PROJECT_ID", "GOOGLE_CLOUD_PROJECT")
		m, err := anthropic.NewVertex(ctx, anthropic.VertexConfig{
			Config: anthropic.Config{BaseURL: spec.BaseURL, Model: p.mc.Model, Timeout: timeout, NoCache: p.mc.NoCache, Untraced: p.mc.untraced},
			Region: region, Project: project,
		})
		if err != nil {
			return nil, err
		}
		log.Info("model provider ready", "region", region, "project", project)
		return m, nil
	}
	return nil, fmt.Errorf("unknown provider %q", spec.Name)
}

// noCount hides a model's CountTokens, for a platform without the
// endpoint: budgets then estimate from size without failing a call first.
type noCount struct{ coachd.Model }

// brokenModel fails every stream with the error that kept its provider
// from being built.
type brokenModel struct{ err error }

func (b brokenModel) Stream(context.Context, *coachd.ModelRequest) coachd.ModelStream {
	return &failedStream{b.err}
}

type failedStream struct{ err error }

func (f *failedStream) Next() bool                      { return false }
func (f *failedStream) Event() coachd.ModelEvent        { return coachd.ModelEvent{} }
func (f *failedStream) Err() error                      { return f.err }
func (f *failedStream) Response() *coachd.ModelResponse { return &coachd.ModelResponse{} }
func (f *failedStream) Close() error                    { return nil }

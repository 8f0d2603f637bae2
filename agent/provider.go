package agent

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"

	"github.com/coachd/coachd"
	"gopkg.in/yaml.v3"
)

// Model providers an agent file may name.
const (
	ProviderAnthropic = "anthropic" // the Anthropic Messages API (the default)
	ProviderOpenAI    = "openai"    // OpenAI-compatible chat completions: OpenAI, vLLM, Ollama, LiteLLM
	ProviderBedrock   = "bedrock"   // Claude on Amazon Bedrock
	ProviderVertex    = "vertex"    // Claude on Google Vertex AI
)

// Providers lists the provider names, for help texts and errors.
var Providers = []string{ProviderAnthropic, ProviderOpenAI, ProviderBedrock, ProviderVertex}

// Provider says which API serves an agent's model and how to reach it.
// Secrets never appear in a pack: APIKeyEnv names the environment variable
// holding the key. The zero value is the server's own model (--provider).
type Provider struct {
	Name      string `yaml:"name" json:"name,omitempty"`
	BaseURL   string `yaml:"base_url" json:"base_url,omitempty"`
	APIKeyEnv string `yaml:"api_key_env" json:"api_key_env,omitempty"`
	Region    string `yaml:"region" json:"region,omitempty"`
	Project   string `yaml:"project" json:"project,omitempty"`
}

var (
	providerKeys = yamlKeys(Provider{})
	envNameRe    = regexp.MustCompile(`^[A-Z_][A-Z0-9_]{0,63}$`)
	// A provider's model id: OpenAI and Ollama names (gpt-5.1,
	// llama3.1:8b), Hugging Face paths (Qwen/Qwen3-8B), Bedrock ids and
	// inference profiles (eu.anthropic.claude-...-v1:0), Vertex ids
	// (claude-sonnet-4-5@20250929).
	providerModelRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:@/+-]{0,199}$`)
	regionRe        = regexp.MustCompile(`^[a-z0-9-]{2,40}$`)
	projectRe       = regexp.MustCompile(`^[a-z][a-z0-9-]{4,61}[a-z0-9]$`)
)

// parseProvider reads the provider key: a name ("provider: openai") or a
// mapping with the name and its settings.
func parseProvider(fm *frontMatter, n yaml.Node) Provider {
	var p Provider
	switch n.Kind {
	case 0:
		return p
	case yaml.ScalarNode:
		p.Name = n.Value
	case yaml.MappingNode:
		fm.checkKeys(&n, providerKeys)
		if err := n.Decode(&p); err != nil {
			fm.bad(fm.line("provider"), "provider: "+err.Error())
			return Provider{}
		}
	default:
		fm.bad(fm.line("provider"), "provider is a name or a mapping with name, base_url, api_key_env, region, project")
		return Provider{}
	}
	line := func(key string) int {
		if n.Kind == yaml.MappingNode {
			return fm.line("provider", key)
		}
		return fm.line("provider")
	}
	if !slices.Contains(Providers, p.Name) {
		fm.bad(line("name"), fmt.Sprintf("provider %q: use one of %v", p.Name, Providers))
		return Provider{}
	}
	if p.BaseURL != "" {
		if u, err := url.Parse(p.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			fm.bad(line("base_url"), "base_url must be an http or https URL without credentials")
		}
	}
	keyed := p.Name == ProviderAnthropic || p.Name == ProviderOpenAI
	if p.BaseURL != "" && !keyed {
		// No key of its own to send there: the SDK would sign for the
		// pack's host with the server's (a Bedrock API key, an AWS
		// session token, a Google access token).
		fm.bad(line("base_url"), fmt.Sprintf("base_url is for anthropic and openai: %s signs with coachd's own cloud credentials, sent to the platform's own endpoint only", p.Name))
	}
	switch {
	case p.APIKeyEnv != "" && !keyed:
		fm.bad(line("api_key_env"), fmt.Sprintf("api_key_env is for anthropic and openai; %s uses its platform's credentials", p.Name))
	case p.APIKeyEnv != "" && !envNameRe.MatchString(p.APIKeyEnv):
		fm.bad(line("api_key_env"), "api_key_env is the name of an environment variable, like OPENAI_API_KEY (not the key)")
	case coachd.OwnEnv(p.APIKeyEnv):
		// Leaving it out is how an agent uses coachd's own model key.
		fm.bad(line("api_key_env"), "api_key_env: "+coachd.EnvProblem(p.APIKeyEnv))
	case p.Name == ProviderAnthropic && p.BaseURL != "" && p.APIKeyEnv == "":
		// coachd's own ANTHROPIC_API_KEY goes to ANTHROPIC_BASE_URL only,
		// never to a host a pack names.
		fm.bad(line("base_url"), "base_url needs api_key_env naming the key for that server: coachd's own ANTHROPIC_API_KEY is not sent to a pack's base_url")
	}
	switch {
	case p.Region != "" && keyed:
		fm.bad(line("region"), "region is for bedrock and vertex")
	case p.Region != "" && !regionRe.MatchString(p.Region):
		fm.bad(line("region"), fmt.Sprintf("region %q is not a region name", p.Region))
	}
	switch {
	case p.Project != "" && p.Name != ProviderVertex:
		fm.bad(line("project"), "project is for vertex")
	case p.Project != "" && !projectRe.MatchString(p.Project):
		fm.bad(line("project"), fmt.Sprintf("project %q is not a Google Cloud project id", p.Project))
	}
	return p
}

// resolveModel checks an agent's model (key is "model" or
// "fallback_model") for its provider: the Anthropic API takes the Claude
// ids and aliases coachd knows, the others their own ids, which coachd
// cannot list and only checks for shape.
func resolveModel(fm *frontMatter, p Provider, key, name string) string {
	if p.Name == "" || p.Name == ProviderAnthropic {
		id, ok := coachd.ResolveModel(name)
		if !ok {
			fm.bad(fm.line(key), fmt.Sprintf("unknown model %q: use sonnet, opus, haiku or a Claude model id", name))
		}
		return id
	}
	if !providerModelRe.MatchString(name) {
		fm.bad(fm.line(key), fmt.Sprintf("%s %q is not a model id", key, name))
	}
	return name
}

// model is the model serving the turn's agent: its provider's, or the
// runner's own.
func (t *Turn) model() coachd.Model {
	if f := t.r.cfg.ModelFor; f != nil && t.agent.Provider != (Provider{}) {
		if m := f(t.agent); m != nil {
			return m
		}
	}
	return t.r.cfg.Model
}

package agent_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/openai"
	"github.com/coachd/coachd/openai/openaitest"
	"github.com/coachd/coachd/tools"
)

func writeAgents(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		path := filepath.Join(dir, "agents", name+".md")
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte("---\nname: "+name+"\ndescription: d\n"+text+"---\nYou coach.\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestAgentProvider(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		dir := writeAgents(t, map[string]string{
			"local":   "provider: openai\nmodel: llama3.1:8b\nfallback_model: Qwen/Qwen3-8B\n",
			"proxied": "provider:\n  name: openai\n  base_url: http://litellm:4000/v1\n  api_key_env: LITELLM_KEY\nmodel: gpt-5.1\n",
			"aws":     "provider:\n  name: bedrock\n  region: eu-central-1\nmodel: eu.anthropic.claude-sonnet-4-5-20250929-v1:0\n",
			"gcp":     "provider:\n  name: vertex\n  region: us-east5\n  project: coachd-prod\nmodel: claude-sonnet-4-5@20250929\n",
			"claude":  "model: sonnet\n",
		})
		p, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins()})
		if err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]struct {
			p     agent.Provider
			model string
		}{
			"local":   {agent.Provider{Name: "openai"}, "llama3.1:8b"},
			"proxied": {agent.Provider{Name: "openai", BaseURL: "http://litellm:4000/v1", APIKeyEnv: "LITELLM_KEY"}, "gpt-5.1"},
			"aws":     {agent.Provider{Name: "bedrock", Region: "eu-central-1"}, "eu.anthropic.claude-sonnet-4-5-20250929-v1:0"},
			"gcp":     {agent.Provider{Name: "vertex", Region: "us-east5", Project: "coachd-prod"}, "claude-sonnet-4-5@20250929"},
			"claude":  {agent.Provider{}, coachd.ModelAliases()["sonnet"]},
		} {
			a, ok := p.Agent(name)
			if !ok || a.Provider != want.p || a.Model != want.model {
				t.Errorf("%s: provider %+v model %q, want %+v %q", name, a.Provider, a.Model, want.p, want.model)
			}
		}
		if a, _ := p.Agent("local"); a.FallbackModel != "Qwen/Qwen3-8B" {
			t.Errorf("fallback_model = %q", a.FallbackModel)
		}
	})
	t.Run("ErrProblems", func(t *testing.T) {
		dir := writeAgents(t, map[string]string{
			"a": "provider: mistralai\n",
			"b": "provider: openai\n",
			"c": "provider:\n  name: bedrock\n  api_key_env: AWS_SECRET_ACCESS_KEY\nmodel: x\n",
			"d": "provider:\n  name: openai\n  api_key_env: sk-live-123\n  base_url: ftp://x\n  region: us-east-1\nmodel: gpt-5.1\n",
			"e": "provider:\n  name: openai\n  token: abc\nmodel: gpt-5.1\n",
			"f": "model: gpt-5.1\n",
			"g": "provider: openai\nmodel: \"gpt 5; rm -rf\"\n",
			"h": "provider:\n  name: bedrock\n  base_url: https://gateway.example\nmodel: x\n",
			"i": "provider: {name: vertex, base_url: \"https://gateway.example\"}\nmodel: x\n",
		})
		_, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins()})
		if err == nil {
			t.Fatal("no error")
		}
		got := err.Error()
		for _, want := range []string{
			`agents/a.md:4: provider "mistralai"`,
			"agents/b.md:4: provider openai needs model",
			"agents/c.md:6: api_key_env is for anthropic and openai",
			"agents/d.md:6: api_key_env is the name of an environment variable",
			"agents/d.md:7: base_url must be an http or https URL",
			"agents/d.md:8: region is for bedrock and vertex",
			`agents/e.md:6: unknown key "token"`,
			`agents/f.md:4: unknown model "gpt-5.1"`,
			`agents/g.md:5: model "gpt 5; rm -rf" is not a model id`,
			"agents/h.md:6: base_url is for anthropic and openai: bedrock signs with coachd's own cloud credentials",
			"agents/i.md:4: base_url is for anthropic and openai: vertex signs with coachd's own cloud credentials",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("missing %q in:\n%s", want, got)
			}
		}
	})
}

// TestModelFor: an agent naming a provider is served by ModelFor's model,
// the others by the runner's own.
func TestModelFor(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	oai := openaitest.NewServer()
	t.Cleanup(oai.Close)
	h.agent.Provider, h.agent.Model = agent.Provider{Name: agent.ProviderOpenAI}, "llama3.1:8b"
	var asked []*agent.Agent
	h.runner = h.newRunner(append(tools.Builtins(), echoTool), func(string) (*agent.Agent, bool) { return h.agent, true },
		func(c *agent.Config) {
			c.ModelFor = func(a *agent.Agent) coachd.Model {
				asked = append(asked, a)
				return openai.New(openai.Config{BaseURL: oai.URL(), MaxRetries: -1})
			}
		})
	oai.Enqueue(openaitest.Text("Served locally."))
	res := h.turn(agent.TurnRequest{Message: "hi"}, &sink{})
	if res.StopReason != coachd.TurnEndTurn || res.Text != "Served locally." || len(h.fake.Requests()) != 0 {
		t.Fatalf("result %+v, %d requests to Anthropic", res, len(h.fake.Requests()))
	}
	if len(asked) == 0 || asked[0] != h.agent || oai.Requests()[0].Model != "llama3.1:8b" {
		t.Errorf("ModelFor asked for %v; upstream model %q", asked, oai.Requests()[0].Model)
	}
	// Without a provider the runner's model serves.
	h.agent.Provider, h.agent.Model = agent.Provider{}, ""
	h.fake.Enqueue(anthropictest.Text("From Claude.", 4))
	if res := h.turn(agent.TurnRequest{Message: "again"}, &sink{}); res.Text != "From Claude." {
		t.Fatalf("result %+v", res)
	}
}

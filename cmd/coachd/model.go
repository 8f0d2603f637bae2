package main

import (
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/demo"
)

// modelConfig chooses and configures the model: Claude when an API key is
// set, the offline demo model otherwise.
type modelConfig struct {
	Provider  string // anthropic or demo
	APIKey    string
	BaseURL   string
	Model     string
	Timeout   time.Duration
	NoCache   bool
	DemoDelay time.Duration
	Heartbeat time.Duration
	TurnLease time.Duration
	// CountTokens estimates budgets with the API's count_tokens endpoint.
	CountTokens bool

	getenv func(string) string // provider settings: OPENAI_BASE_URL, AWS_REGION, ...
	unit   coachd.BudgetUnit   // what the runner prices usage in (--budget-unit)
	// untraced: no spans are exported (no --otlp-endpoint), so the
	// Anthropic SDK's spans are skipped where they would do nothing
	// (anthropic.Config.Untraced).
	untraced bool
}

func (c *modelConfig) register(fs *flag.FlagSet, env *envDefaults) {
	getenv := env.getenv
	// Trimmed as the provider registry trims it: a key file's trailing
	// newline would make every request fail (no header carries one).
	c.APIKey = strings.TrimSpace(getenv("ANTHROPIC_API_KEY"))
	c.getenv = getenv
	def := "demo"
	if c.APIKey != "" {
		def = "anthropic"
	}
	fs.StringVar(&c.Provider, "provider", envOr(getenv, "COACHD_PROVIDER", def), "model provider of agents that name none: anthropic, openai, bedrock, vertex or demo (default anthropic when ANTHROPIC_API_KEY is set) (env COACHD_PROVIDER)")
	urlVar(fs, &c.BaseURL, "anthropic-base-url", getenv("ANTHROPIC_BASE_URL"), "Anthropic API base `URL` (env ANTHROPIC_BASE_URL)")
	fs.StringVar(&c.Model, "model", envOr(getenv, "COACHD_MODEL", anthropic.DefaultModel), "Claude model for agents that name none (env COACHD_MODEL)")
	fs.DurationVar(&c.Timeout, "model-timeout", env.Duration("COACHD_MODEL_TIMEOUT", 2*time.Minute), "timeout of one model request (env COACHD_MODEL_TIMEOUT)")
	fs.BoolVar(&c.NoCache, "no-prompt-cache", env.Bool("COACHD_NO_PROMPT_CACHE"), "turn prompt-caching breakpoints off (env COACHD_NO_PROMPT_CACHE=1)")
	fs.BoolVar(&c.CountTokens, "count-tokens", env.Bool("COACHD_COUNT_TOKENS"), "estimate turn budgets with the API's count_tokens endpoint instead of from request size (env COACHD_COUNT_TOKENS=1)")
	fs.DurationVar(&c.TurnLease, "turn-lease", env.Duration("COACHD_TURN_LEASE", agent.DefaultTurnLease), "how long a session stays busy after the process running its turn died, at least 1s (env COACHD_TURN_LEASE)")
	fs.DurationVar(&c.DemoDelay, "demo-delay", env.Duration("COACHD_DEMO_DELAY", demo.DefaultDelay), "pause between the demo model's chunks (env COACHD_DEMO_DELAY)")
	fs.DurationVar(&c.Heartbeat, "heartbeat", env.Duration("COACHD_HEARTBEAT", 30*time.Second), "SSE heartbeat interval (env COACHD_HEARTBEAT)")
}

// minTurnLease is the shortest --turn-lease. The lease is renewed every
// third of it, each renewal a database write given a third of the lease
// to finish: under a second a running turn writes several times a second,
// and a renewal held up that long (a busy writer, a slow network) lets the
// lease lapse while the turn still runs, so that another replica may start
// a second turn on the session. Under 3 ns the renewal's ticker panicked.
const minTurnLease = time.Second

// check validates the flags.
func (c *modelConfig) check() error {
	if c.TurnLease < minTurnLease {
		return fmt.Errorf("--turn-lease must be at least %s, not %s", minTurnLease, c.TurnLease)
	}
	return nil
}

func (c modelConfig) LogValue() slog.Value {
	key := "(unset)"
	if c.APIKey != "" {
		key = "(set)"
	}
	return slog.GroupValue(
		slog.String("provider", c.Provider), slog.String("anthropic_api_key", key),
		slog.String("base_url", maskDSN(c.BaseURL)), slog.String("model", c.Model),
		slog.Duration("timeout", c.Timeout), slog.Bool("prompt_cache", !c.NoCache),
		slog.Bool("count_tokens", c.CountTokens), slog.Duration("turn_lease", c.TurnLease),
		slog.Duration("heartbeat", c.Heartbeat), slog.Duration("demo_delay", c.DemoDelay),
	)
}

func (c modelConfig) build(logger *slog.Logger) (coachd.Model, error) {
	switch c.Provider {
	case agent.ProviderOpenAI, agent.ProviderBedrock, agent.ProviderVertex:
		if c.Provider == agent.ProviderOpenAI && c.openAIModel() == "" {
			return nil, fmt.Errorf("--provider openai needs --model (COACHD_MODEL): the provider's model id")
		}
		return newProviders(c, c.getenv, logger).model(agent.Provider{Name: c.Provider})
	case "anthropic":
		if c.APIKey == "" {
			return nil, fmt.Errorf("--provider anthropic needs ANTHROPIC_API_KEY")
		}
		return anthropic.New(anthropic.Config{
			APIKey: c.APIKey, BaseURL: c.BaseURL, Model: c.Model, Timeout: c.Timeout, NoCache: c.NoCache, Untraced: c.untraced,
		}), nil
	case "demo":
		return demo.New(demo.Config{Delay: c.DemoDelay}), nil
	}
	return nil, fmt.Errorf("--provider must be anthropic, openai, bedrock, vertex or demo, not %q", c.Provider)
}

// openAIModel is --model for an OpenAI-compatible server: empty when it
// is still the Claude default.
func (c modelConfig) openAIModel() string {
	if c.Model == anthropic.DefaultModel {
		return ""
	}
	return c.Model
}

// newRunner wires the agent runner with the built-in tools, and with the
// coach pack's agents and tools when pack is not nil.
func newRunner(store coachd.Store, model coachd.Model, logger *slog.Logger, pack *agent.Pack, mc modelConfig, obs coachd.Observer) (*agent.Runner, error) {
	ts, err := packTools(pack)
	if err != nil {
		return nil, err
	}
	cfg := agent.Config{
		Store: store, Model: model, Tools: ts, Logger: logger.With("component", "runner"),
		TurnLease: mc.TurnLease, CountTokens: mc.CountTokens, Observer: obs, BudgetUnit: mc.unit,
		DefaultModel: mc.Model,
	}
	if pack != nil {
		cfg.Agents = pack.Agent
		reg := newProviders(mc, mc.getenv, logger)
		if err := reg.check(pack.Agents); err != nil {
			return nil, err
		}
		cfg.ModelFor = reg.For
	}
	return agent.NewRunner(cfg), nil
}

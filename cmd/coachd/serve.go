package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/metrics"
	"github.com/coachd/coachd/review"
	"github.com/coachd/coachd/server"
	"github.com/coachd/coachd/tools"
	"github.com/coachd/coachd/web"
)

// defaultGCPercent is the garbage collector's target for serve when GOGC
// is unset: the heap may grow to three times what is live between
// collections, not twice. A turn allocates about 240 KiB while little of it
// stays live, so collections are frequent; at 200 coachd spends about 4 %
// less CPU a tool turn under load, for about 5 MB more resident memory
// (BENCHMARKS.md). GOGC, when set, wins, as does GOMEMLIMIT as a bound.
const defaultGCPercent = 200

// setGCPercent applies defaultGCPercent unless the operator set GOGC. It
// reads the process's environment, where the runtime read GOGC.
func setGCPercent(logger *slog.Logger) {
	if os.Getenv("GOGC") != "" {
		return
	}
	debug.SetGCPercent(defaultGCPercent)
	logger.Debug("garbage collection target", "gogc", defaultGCPercent)
}

// defaultShutdownGrace bounds how long in-flight requests may take to
// finish after SIGINT, SIGTERM or SIGHUP before the turns still running are cancelled.
const defaultShutdownGrace = 10 * time.Second

// minEventRetention is the shortest --event-retention. The sweeper
// deletes the log of a turn that started longer ago and has shown no life
// for as long. A running turn shows it every second, and readers give up
// one silent for 5 s (stream.DefaultDeadAfter): at a minute only a turn
// long given up goes, never one running (0 deleted the running turn's log
// under it, so that another replica could no longer stop it), and a
// client whose connection dropped for a moment can still resume.
const minEventRetention = time.Minute

// serveConfig is the effective configuration of coachd serve.
type serveConfig struct {
	Addr      string
	DB        string
	AdminKey  string
	Demo      bool
	LogFormat string
	LogLevel  string
	Model     modelConfig
	Budget    budgetConfig
	Edge      edgeConfig
	Voice     voiceConfig
	Pack      string
	// Workspaces is the directory POST /v1/reviews workspaces live under;
	// "" turns reviews off.
	Workspaces string
	// CORSOrigins are the browser origins allowed to call the API.
	CORSOrigins string
	// JWT accepts an identity provider's tokens (empty JWKSURL: off).
	JWKSURL, JWTIssuer, JWTAudience, JWTAlgorithms string
	// OTLPEndpoint, when set, exports trace spans there (OTLP/HTTP).
	OTLPEndpoint string
	// MetricsAddr, when set, serves /metrics there without a key (for a
	// scraper on a private network); /metrics on the API needs the admin key.
	MetricsAddr string
	// WebhookAllow lists the non-public hosts and CIDRs webhook tools may
	// reach.
	WebhookAllow string
	// WebhookSecret (whsec_…) signs webhook calls; a tool's secret: wins.
	WebhookSecret string
	// ShutdownGrace is how long running requests may finish on SIGTERM.
	ShutdownGrace time.Duration
	// EventRetention is how long turns' event logs are kept.
	EventRetention time.Duration
	// Pprof, when set, serves net/http/pprof there (loopback only).
	Pprof string
}

func runServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) (retErr error) {
	fs := newFlagSet("serve", "Usage: coachd serve [flags]\n\nStarts the HTTP API. Flags fall back to COACHD_* environment variables.")
	var cfg serveConfig
	env := &envDefaults{getenv: getenv}
	fs.StringVar(&cfg.Addr, "addr", envOr(getenv, "COACHD_ADDR", "127.0.0.1:8080"), "listen address; port 0 picks a free port (env COACHD_ADDR)")
	db := dbFlag(fs, getenv)
	share := shareDBFlag(fs, env)
	secretVar(fs, &cfg.AdminKey, "admin-key", getenv("COACHD_ADMIN_KEY"), "`key` for the admin routes /v1/users…; empty disables them (env COACHD_ADMIN_KEY)")
	fs.BoolVar(&cfg.Demo, "demo", env.Bool("COACHD_DEMO"), "create a demo user if missing and print its API key (env COACHD_DEMO=1)")
	fs.StringVar(&cfg.LogFormat, "log-format", envOr(getenv, "COACHD_LOG_FORMAT", "text"), "log format: text or json (env COACHD_LOG_FORMAT)")
	fs.StringVar(&cfg.LogLevel, "log-level", envOr(getenv, "COACHD_LOG_LEVEL", "info"), "log level: debug, info, warn or error; health probes log at debug (env COACHD_LOG_LEVEL)")
	cfg.Model.register(fs, env)
	cfg.Budget.register(fs, env)
	cfg.Edge.register(fs, env)
	cfg.Voice.register(fs, env)
	fs.DurationVar(&cfg.EventRetention, "event-retention", env.Duration("COACHD_EVENT_RETENTION", 7*24*time.Hour),
		"how long turns' event logs are kept for clients re-attaching to a stream, at least 1m (also 20 turns per session at most) (env COACHD_EVENT_RETENTION)")
	fs.DurationVar(&cfg.ShutdownGrace, "shutdown-grace", env.Duration("COACHD_SHUTDOWN_GRACE", defaultShutdownGrace),
		"on SIGINT, SIGTERM or SIGHUP, how long running requests may finish before their turns are cancelled; a second signal ends it (env COACHD_SHUTDOWN_GRACE)")
	fs.StringVar(&cfg.Pack, "pack", getenv("COACHD_PACK"), "coach pack directory (agents/, skills/, tools/); empty serves the built-in default agent (env COACHD_PACK)")
	fs.StringVar(&cfg.Workspaces, "workspaces", getenv("COACHD_WORKSPACES"), "directory of the users' workspaces: POST /v1/reviews reviews DIR/<user id>/<workspace> (needs --pack with a coach); empty turns reviews off (env COACHD_WORKSPACES)")
	urlVar(fs, &cfg.JWKSURL, "jwt-jwks-url", getenv("COACHD_JWT_JWKS_URL"), "accept JWT bearer tokens signed by a key of this JWKS `URL` beside coachd keys; users are created on first sight (env COACHD_JWT_JWKS_URL)")
	fs.StringVar(&cfg.JWTIssuer, "jwt-issuer", getenv("COACHD_JWT_ISSUER"), "the iss tokens must carry (required with --jwt-jwks-url) (env COACHD_JWT_ISSUER)")
	fs.StringVar(&cfg.JWTAudience, "jwt-audience", getenv("COACHD_JWT_AUDIENCE"), "the aud tokens must carry (required with --jwt-jwks-url) (env COACHD_JWT_AUDIENCE)")
	fs.StringVar(&cfg.JWTAlgorithms, "jwt-algorithms", envOr(getenv, "COACHD_JWT_ALGORITHMS", "RS256,ES256"), "signature algorithms accepted: RS256, RS384, RS512, ES256, ES384 (env COACHD_JWT_ALGORITHMS)")
	urlVar(fs, &cfg.OTLPEndpoint, "otlp-endpoint", envOr(getenv, "COACHD_OTLP_ENDPOINT", getenv("OTEL_EXPORTER_OTLP_ENDPOINT")),
		"export OpenTelemetry traces (turn, model call and tool spans, GenAI conventions) over OTLP/HTTP to this `URL`, e.g. http://collector:4318; empty is off (env COACHD_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT)")
	fs.StringVar(&cfg.MetricsAddr, "metrics-addr", getenv("COACHD_METRICS_ADDR"),
		"also serve Prometheus /metrics on this address, without a key (a private network); /metrics on --addr needs the admin key (env COACHD_METRICS_ADDR)")
	fs.StringVar(&cfg.CORSOrigins, "cors-origins", getenv("COACHD_CORS_ORIGINS"),
		"browser origins allowed to call the API from another origin, comma-separated (https://app.example.com), or *; empty allows none (env COACHD_CORS_ORIGINS)")
	fs.StringVar(&cfg.WebhookAllow, "webhook-allow", getenv("COACHD_WEBHOOK_ALLOW"),
		"non-public hosts and CIDRs webhook tools may reach, comma-separated (e.g. 127.0.0.1/32,10.0.0.0/8); loopback, private and link-local addresses are refused otherwise (env COACHD_WEBHOOK_ALLOW)")
	fs.StringVar(&cfg.Pprof, "pprof", getenv("COACHD_PPROF"), "serve /debug/pprof/ on this loopback address, e.g. 127.0.0.1:6060; off by default (env COACHD_PPROF)")
	secretVar(fs, &cfg.WebhookSecret, "webhook-secret", getenv("COACHD_WEBHOOK_SECRET"),
		"sign webhook calls (Standard Webhooks headers) with this whsec_… `secret`; prefer the environment, a flag shows in ps (env COACHD_WEBHOOK_SECRET)")
	if done, err := parseFlags(fs, args, stdout, stderr); done || err != nil {
		return err
	}
	if err := env.check(); err != nil {
		fmt.Fprintf(stderr, "coachd serve: %v\n", err)
		return errUsage
	}
	cfg.DB = *db
	jwt, err := cfg.jwt()
	if err != nil {
		fmt.Fprintf(stderr, "coachd serve: %v\n", err)
		return errUsage
	}
	origins, err := parseOrigins(cfg.CORSOrigins)
	if err != nil {
		fmt.Fprintf(stderr, "coachd serve: --cors-origins: %v\n", err)
		return errUsage
	}
	if _, err := tools.ParseAddrPolicy(cfg.WebhookAllow); err != nil {
		fmt.Fprintf(stderr, "coachd serve: --webhook-allow: %v\n", err)
		return errUsage
	}
	if cfg.WebhookSecret != "" {
		if _, err := tools.ParseWebhookSecret(cfg.WebhookSecret); err != nil {
			fmt.Fprintf(stderr, "coachd serve: --webhook-secret: %v\n", err)
			return errUsage
		}
	}
	for _, check := range []func() error{cfg.checkAddrs, cfg.Model.check, cfg.Budget.check, cfg.Edge.check, cfg.Voice.check} {
		if err := check(); err != nil {
			fmt.Fprintf(stderr, "coachd serve: %v\n", err)
			return errUsage
		}
	}
	if cfg.EventRetention < minEventRetention {
		fmt.Fprintf(stderr, "coachd serve: --event-retention must be at least %s, not %s\n", minEventRetention, cfg.EventRetention)
		return errUsage
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		fmt.Fprintf(stderr, "coachd serve: --log-level must be debug, info, warn or error, not %q\n", cfg.LogLevel)
		return errUsage
	}
	opts := &slog.HandlerOptions{Level: level}
	var handler slog.Handler
	switch cfg.LogFormat {
	case "text":
		handler = slog.NewTextHandler(stderr, opts)
	case "json":
		handler = slog.NewJSONHandler(stderr, opts)
	default:
		fmt.Fprintf(stderr, "coachd serve: --log-format must be text or json, not %q\n", cfg.LogFormat)
		return errUsage
	}
	logger := slog.New(handler)
	defer func() {
		if retErr != nil && !errors.Is(retErr, errUsage) {
			// In the log's own format too: main's plain line is no record.
			logger.Error("coachd exiting on an error", "error", strings.TrimPrefix(errorLine(retErr), "coachd: "))
		}
	}()
	setGCPercent(logger)
	stopTracing, err := setupTracing(ctx, cfg.OTLPEndpoint, logger)
	if err != nil {
		fmt.Fprintf(stderr, "coachd serve: %v\n", err)
		return errUsage
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		stopTracing(sctx)
	}()
	logger.Info("starting coachd", "version", versionString(), "config", cfg)
	for _, name := range unknownEnv(os.Environ()) {
		logger.Warn("unknown environment variable: no coachd setting reads it (a typo?)", "name", name)
	}
	cfg.Model.untraced = cfg.OTLPEndpoint == ""
	model, err := cfg.Model.build(logger)
	if err != nil {
		fmt.Fprintf(stderr, "coachd serve: %v\n", err)
		return errUsage
	}
	if cfg.Model.Provider == "demo" && cfg.Model.BaseURL != "" {
		logger.Warn("ANTHROPIC_BASE_URL is set but ANTHROPIC_API_KEY is not: serving the offline demo model (set a key, or --provider anthropic)")
	}

	store, applied, err := openMigrated(ctx, cfg.DB, *share)
	if err != nil {
		return err
	}
	defer store.Close()
	// In a rolling upgrade this is what changes the schema: say so.
	logger.Info("database ready", "dialect", store.Dialect(), "migrations_applied", applied)
	warnOpenMode(logger, cfg.DB)
	store.SetBudgetConfig(cfg.Budget.store())
	var pack *agent.Pack
	expiry := sessionExpiry{}
	if cfg.Pack != "" {
		if pack, err = loadPackLogged(cfg.Pack, getenv, cfg.WebhookAllow, cfg.WebhookSecret, logger); err != nil {
			return err
		}
		// Runs after the HTTP shutdown: stops the pack's MCP servers.
		defer pack.Close()
		logger.Info("coach pack loaded", "dir", cfg.Pack, "agents", len(pack.Agents), "skills", len(pack.Skills), "tools", len(pack.Tools))
		if err := checkUserKeys(pack, jwt != nil, logger); err != nil {
			fmt.Fprintf(stderr, "coachd serve: %v\n", err)
			return errUsage
		}
		store.SetNoteVocabulary(pack.Notes)
		for _, a := range pack.Agents {
			if a.SessionExpiry > 0 {
				expiry[a.Name] = a.SessionExpiry
			}
		}
	}
	// The store's setters run before anything uses it: the sweeper
	// begins transactions at once.
	m := metrics.New()
	store.SetObserver(m)
	if store.Dialect() == "sqlite" {
		m.WatchWriter(store.WriteStats)
	}
	sweepCtx, stopSweep := context.WithCancel(ctx)
	defer stopSweep()
	go sweep(sweepCtx, store, cfg.Budget.ReservationTTL, expiry, cfg.EventRetention, logger.With("component", "sweeper"))
	cfg.Model.unit = cfg.Budget.store().Unit
	runner, err := newRunner(store, model, logger, pack, cfg.Model, m)
	if err != nil {
		return err
	}
	var reviewer *review.Reviewer
	if cfg.Workspaces != "" {
		if pack == nil {
			fmt.Fprintln(stderr, "coachd serve: --workspaces needs --pack (the coach agent comes from a pack)")
			return errUsage
		}
		if fi, err := os.Stat(cfg.Workspaces); err != nil || !fi.IsDir() {
			fmt.Fprintf(stderr, "coachd serve: --workspaces %s is not a directory\n", cfg.Workspaces)
			return errUsage
		}
		if cfg.Model.Provider == "demo" && !anyCoachHasProvider(pack) {
			fmt.Fprintln(stderr, "coachd serve: --workspaces: the offline demo model cannot review (it never calls validate_implementation or record_decision): "+
				"set ANTHROPIC_API_KEY, or --provider openai, bedrock or vertex, or leave --workspaces out")
			return errUsage
		}
		if err := review.SharedAbove(cfg.Workspaces); err != nil {
			logger.Warn("--workspaces is not private: a review's tests read files another user could leave there", "reason", coachd.ErrorMessage(err))
		}
		reviewer = &review.Reviewer{Runner: runner, Store: store, Root: cfg.Workspaces, Agents: pack.Agents, Logger: logger.With("component", "reviews")}
	}

	// Requests' contexts derive from base: when the shutdown grace runs
	// out, cancelling it ends the turns still running the way a client
	// leaving does (what was said is stored, the reservation settled)
	// instead of cutting them off mid-write.
	base, cancelBase := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelBase()
	api := server.New(server.Deps{
		Store:       store,
		Logger:      logger,
		Clock:       coachd.SystemClock{},
		AdminKey:    cfg.AdminKey,
		Ping:        store.Ping,
		Ready:       store.CheckMigrations,
		Runner:      runner,
		Pack:        pack,
		Heartbeat:   cfg.Model.Heartbeat,
		Limits:      cfg.Budget.limits(),
		Reviews:     reviewer,
		CORSOrigins: origins,
		Observer:    m,
		JWT:         jwt,
		Metrics:     m.Handler(),
		Voice:       cfg.Voice.build(logger),

		BodyTimeout:  cfg.Edge.BodyTimeout,
		WriteTimeout: cfg.Edge.WriteTimeout,

		MaxStreamsPerUser: cfg.Edge.MaxStreamsPerUser,
	})
	srv := &http.Server{
		BaseContext: func(net.Listener) context.Context { return base },
		Handler:     withUI(api, cfg.Voice.origin()),
		// No ReadTimeout or WriteTimeout: chat responses are SSE streams
		// that stay open for minutes, and either whole-request deadline
		// would cut them. The API bounds each body and each write instead;
		// slow headers are bounded here, idle keep-alives below, and the
		// number of connections by the listener.
		ReadHeaderTimeout: cfg.Edge.HeaderTimeout,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(handler, slog.LevelWarn),
	}
	if cfg.Pprof != "" {
		stop, err := servePprof(cfg.Pprof, logger)
		if err != nil {
			return err
		}
		defer stop()
	}
	if cfg.MetricsAddr != "" {
		stop, err := serveMetrics(cfg.MetricsAddr, m.Handler(), logger)
		if err != nil {
			return err
		}
		defer stop()
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	ln = server.LimitListener(ln, cfg.Edge.MaxConns)
	addr := ln.Addr().String()
	if cfg.Demo {
		if err := announceDemo(ctx, store, demoURL(cfg.Addr, addr), cfg.Budget.DefaultBudget, stdout); err != nil {
			ln.Close()
			return fmt.Errorf("demo user: %w", err)
		}
	}
	// The listening line comes last: whoever waits for it (a person, a
	// test) has everything else printed by then.
	logger.Info("listening", "addr", addr)
	fmt.Fprintf(stdout, "coachd listening on http://%s\n", addr)
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()

	select {
	case err := <-serveErr:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	// A second signal (an operator who will not wait) ends the grace at
	// once; registered before the log line that says the first was seen.
	again := make(chan os.Signal, 1)
	signal.Notify(again, stopSignals()...)
	defer signal.Stop(again)
	logger.Info("shutting down", "grace", cfg.ShutdownGrace.String(), "cause", context.Cause(ctx).Error())
	if err := shutdown(srv, api, cfg.ShutdownGrace, again, cancelBase, logger); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	logger.Info("stopped")
	return nil
}

// withUI serves the embedded browser UI at / and /assets/, and the API
// everywhere else (so unknown /v1 routes keep their JSON errors).
func withUI(api http.Handler, connect ...string) http.Handler {
	mux := http.NewServeMux()
	ui := web.Handler(connect...)
	mux.Handle("GET /{$}", ui)
	mux.Handle("GET /assets/", ui)
	mux.Handle("/", api)
	return mux
}

// shutdown stops accepting requests and waits up to grace (or until a
// signal on again) for the running ones and for the turns that outlive
// their request (on_disconnect: continue); then every open stream gets a
// retryable server_shutdown error with its last event id (a client
// resumes elsewhere or after the restart), the turns still running stop
// (stored and settled as aborted), the requests are cancelled, and it
// waits a little more for all of them.
func shutdown(srv *http.Server, api *server.Server, grace time.Duration, again <-chan os.Signal, cancelRequests context.CancelFunc, logger *slog.Logger) error {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	go func() {
		select {
		case <-again:
			logger.Warn("signalled again: ending the grace now")
			cancel()
		case <-ctx.Done():
		}
	}()
	err := srv.Shutdown(ctx)
	if err == nil {
		err = api.WaitTurns(ctx)
	}
	if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		return err
	}
	logger.Warn("shutdown grace over: ending the streams and stopping the turns still running")
	api.Drain()
	// The streams send their last event and end by themselves; what is
	// still running after that is cancelled.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel2()
	if err := srv.Shutdown(ctx2); !errors.Is(err, context.DeadlineExceeded) {
		ctx3, cancel3 := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel3()
		return api.WaitTurns(ctx3)
	}
	cancelRequests()
	ctx3, cancel3 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel3()
	err = srv.Shutdown(ctx3)
	if werr := api.WaitTurns(ctx3); err == nil {
		err = werr
	}
	return err
}

// parseOrigins reads --cors-origins: "*" or origins like
// https://app.example.com[:port], without a path.
func parseOrigins(list string) ([]string, error) {
	var out []string
	for _, o := range strings.Split(list, ",") {
		if o = strings.TrimSpace(o); o == "" {
			continue
		}
		if o != "*" {
			u, err := url.Parse(o)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
				return nil, fmt.Errorf("%q is not an origin like https://app.example.com", o)
			}
			o = u.Scheme + "://" + u.Host
		}
		out = append(out, o)
	}
	return out, nil
}

// jwt is the JWT configuration, or nil when --jwt-jwks-url is empty.
func (c serveConfig) jwt() (*server.JWTConfig, error) {
	if c.JWKSURL == "" {
		return nil, nil
	}
	if u, err := url.Parse(c.JWKSURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("--jwt-jwks-url must be an http(s) URL")
	}
	if c.JWTIssuer == "" || c.JWTAudience == "" {
		return nil, fmt.Errorf("--jwt-jwks-url needs --jwt-issuer and --jwt-audience")
	}
	var algs []string
	for _, a := range strings.Split(c.JWTAlgorithms, ",") {
		switch a = strings.TrimSpace(a); a {
		case "RS256", "RS384", "RS512", "ES256", "ES384":
			algs = append(algs, a)
		case "":
		default:
			return nil, fmt.Errorf("--jwt-algorithms: %q is not accepted (RS256, RS384, RS512, ES256, ES384)", a)
		}
	}
	return &server.JWTConfig{JWKSURL: c.JWKSURL, Issuer: c.JWTIssuer, Audience: c.JWTAudience, Algorithms: algs}, nil
}

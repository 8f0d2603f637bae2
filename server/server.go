// Package server is coachd's HTTP API: routes, authentication, strict JSON
// decoding, and one mapping from coachd error codes to HTTP responses.
package server

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/review"
	"github.com/coachd/coachd/sse"
	"github.com/coachd/coachd/stream"
	"github.com/coachd/coachd/voice"
)

// DefaultMaxBodyBytes limits request bodies when Deps.MaxBodyBytes is zero.
const DefaultMaxBodyBytes = 1 << 20

// Deps is everything the server needs. Zero values get sensible defaults,
// except Store, which is required.
type Deps struct {
	Store  coachd.Store
	Logger *slog.Logger
	Clock  coachd.Clock
	// AdminKey authorizes the admin routes (/v1/users…). Empty disables
	// them: they answer 403.
	AdminKey string
	// MaxBodyBytes limits every request body (default 1 MiB).
	MaxBodyBytes int64
	// BodyTimeout is how long a request body may take to arrive, from the
	// moment its headers are in (default 30 s; negative: no limit).
	BodyTimeout time.Duration
	// WriteTimeout bounds each write to a client: every SSE event and
	// heartbeat, every JSON response (default 10 s; negative: no limit).
	// A stream whose client stopped reading ends like a disconnect.
	WriteTimeout time.Duration
	// Ping checks the database for /healthz and /readyz; nil reports healthy.
	Ping func(context.Context) error
	// Ready checks the schema for /readyz (sqlstore's CheckMigrations);
	// nil skips it.
	Ready func(context.Context) error
	// Runner runs chat turns; nil leaves the chat routes answering 503.
	Runner *agent.Runner
	// Heartbeat is the SSE keep-alive interval (default 30 s).
	Heartbeat time.Duration
	// Pack is the coach pack served (GET /v1/agents, /v1/skills); nil
	// lists the runner's default agent only.
	Pack *agent.Pack
	// Limits are the per-user limits' defaults (zero: off).
	Limits Limits
	// Reviews runs the validator coach (POST /v1/reviews); nil turns
	// reviews off (403).
	Reviews *review.Reviewer
	// JWT, when set, accepts the app's identity provider's tokens beside
	// coachd keys (users are created on first sight).
	JWT *JWTConfig
	// Observer is told about rejections and open streams (metrics); nil
	// observes nothing.
	Observer coachd.Observer
	// Metrics serves GET /metrics behind the admin key; nil leaves the
	// route out.
	Metrics http.Handler
	// Hub runs turns and their event log; nil makes one over Store.
	Hub *stream.Hub
	// CORSOrigins are the browser origins (https://app.example.com, or *)
	// allowed to call the API from another origin; empty allows none.
	CORSOrigins []string
	// Voice is the realtime voice provider; nil turns the voice routes
	// off (403) and GET /v1/voice says so.
	Voice *voice.Client
	// MaxStreamsPerUser caps the session streams one user holds open
	// here; more are refused with 429 (zero or negative: no limit).
	MaxStreamsPerUser int
	// MaxReviewsPerUser caps the reviews one user has running here; more
	// are refused with 429 (zero: MaxReviewsPerUser; negative: no limit).
	MaxReviewsPerUser int
}

// Server is the coachd HTTP API. It is an http.Handler.
type Server struct {
	store       coachd.Store
	logger      *slog.Logger
	clock       coachd.Clock
	adminKey    string
	adminSum    [sha256.Size]byte // of adminKey, for requireAdmin
	maxBody     int64
	bodyTime    time.Duration // 0: no limit
	writeTime   time.Duration // 0: no limit
	ping        func(context.Context) error
	ready       func(context.Context) error
	runner      *agent.Runner
	heartbeat   time.Duration
	pack        *agent.Pack
	limits      Limits
	reviews     *review.Reviewer
	corsOrigins []string
	observer    coachd.Observer
	jwt         *jwtVerifier
	metrics     http.Handler
	voice       *voice.Client
	hub         *stream.Hub
	detached    detachedStreams // session streams parked off their request (detach.go)
	streams     *streamSlots
	reviewing   *streamSlots // each user's reviews running
	refused     refusals     // users a limit refused lately (limits.go)
	draining    atomic.Bool  // Drain was called: a turn stopped now was cut by it

	mux      *http.ServeMux
	patterns []string // registered routes, for Routes
	handler  http.Handler
}

// New returns a Server with every route registered.
func New(deps Deps) *Server {
	s := &Server{
		store:       deps.Store,
		logger:      deps.Logger,
		clock:       deps.Clock,
		adminKey:    deps.AdminKey,
		maxBody:     deps.MaxBodyBytes,
		bodyTime:    orDefault(deps.BodyTimeout, DefaultBodyTimeout),
		writeTime:   orDefault(deps.WriteTimeout, sse.DefaultWriteTimeout),
		ping:        deps.Ping,
		ready:       deps.Ready,
		runner:      deps.Runner,
		heartbeat:   deps.Heartbeat,
		pack:        deps.Pack,
		limits:      deps.Limits,
		reviews:     deps.Reviews,
		corsOrigins: deps.CORSOrigins,
		observer:    deps.Observer,
		metrics:     deps.Metrics,
		voice:       deps.Voice,
		hub:         deps.Hub,
		streams:     newStreamSlots(deps.MaxStreamsPerUser),
		reviewing:   newReviewSlots(deps.MaxReviewsPerUser),
		mux:         http.NewServeMux(),
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.clock == nil {
		s.clock = coachd.SystemClock{}
	}
	if s.hub == nil {
		s.hub = stream.NewHub(s.store, s.logger.With("component", "stream"))
	}
	if s.observer == nil {
		s.observer = coachd.NopObserver{}
	}
	if deps.JWT != nil {
		s.jwt = newJWTVerifier(*deps.JWT)
	}
	if s.adminKey != "" {
		s.adminSum = sha256.Sum256([]byte(s.adminKey))
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBodyBytes
	}
	s.routes()
	// Outermost first: every response, even a panic or an unknown route,
	// carries the security headers and a request id and is logged. The
	// body is bounded before anything can read it, and a malformed query
	// string is refused before any route reads it.
	s.handler = withHeaders(s.withCORS(s.withRequestID(s.withBody(s.withLogging(s.withRecovery(s.withQueryCheck(http.HandlerFunc(s.dispatch))))))))
	return s
}

// orDefault is d, or def when d is zero; a negative d is "no limit" (0).
func orDefault(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.handler.ServeHTTP(w, r)
}

// dispatch routes through the mux, answering unknown routes and wrong
// methods with the JSON error body instead of the mux's plain text.
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request) {
	h, pattern := s.mux.Handler(r)
	if pattern != "" {
		s.mux.ServeHTTP(w, r)
		return
	}
	// No pattern: the mux would answer 404, 405 or a redirect (to a cleaned
	// path). Keep its status and headers, replace plain-text bodies.
	h.ServeHTTP(&jsonErrorWriter{ResponseWriter: w, s: s, r: r}, r)
}

// jsonErrorWriter turns the mux's 404 and 405 into JSON error bodies.
type jsonErrorWriter struct {
	http.ResponseWriter
	s        *Server
	r        *http.Request
	replaced bool
}

func (w *jsonErrorWriter) WriteHeader(status int) {
	switch status {
	case http.StatusNotFound:
		w.replaced = true
		w.Header().Del("Content-Type")
		w.s.Error(w.ResponseWriter, w.r, coachd.Errorf(coachd.ENOTFOUND, "no such route: %s %s", w.r.Method, w.r.URL.Path))
	case http.StatusMethodNotAllowed:
		w.replaced = true
		w.Header().Del("Content-Type")
		writeError(w.ResponseWriter, http.StatusMethodNotAllowed, &coachd.Error{
			Code:    coachd.EINVALID,
			Message: "method " + w.r.Method + " not allowed on " + w.r.URL.Path + "; allowed: " + w.Header().Get("Allow"),
		})
	default:
		w.ResponseWriter.WriteHeader(status)
	}
}

func (w *jsonErrorWriter) Write(b []byte) (int, error) {
	if w.replaced {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

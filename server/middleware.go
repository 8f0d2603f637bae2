package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"time"

	"github.com/coachd/coachd"
	"go.opentelemetry.io/otel/propagation"
)

type ctxKey int

const (
	stateKey ctxKey = iota
	userKey
)

// requestState is what the middleware learns about a request as it goes
// down the chain; the logging middleware reads it on the way back up.
type requestState struct {
	id     string
	logger *slog.Logger
	userID string // set by authentication
}

func stateFrom(ctx context.Context) *requestState {
	st, _ := ctx.Value(stateKey).(*requestState)
	return st
}

// RequestIDFrom returns the request id withRequestID assigned, or "".
func RequestIDFrom(ctx context.Context) string {
	if st := stateFrom(ctx); st != nil {
		return st.id
	}
	return ""
}

// log returns the request's logger (with its request id), or the server's.
func (s *Server) log(r *http.Request) *slog.Logger {
	if st := stateFrom(r.Context()); st != nil {
		return st.logger
	}
	return s.logger
}

// withRequestID gives every request an id: the caller's X-Request-Id when it
// is short and plain, a fresh one otherwise. It is echoed in the response
// and attached to every log line of the request.
func (s *Server) withRequestID(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if !plainID(id) {
			var b [8]byte
			_, _ = rand.Read(b[:])
			id = "req_" + hex.EncodeToString(b[:])
		}
		w.Header().Set("X-Request-Id", id)
		st := &requestState{id: id, logger: s.logger.With("request_id", id)}
		// An incoming W3C traceparent makes this request's spans (turn,
		// model calls, tools, webhooks) part of the caller's trace.
		ctx := propagation.TraceContext{}.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		h.ServeHTTP(w, r.WithContext(context.WithValue(ctx, stateKey, st)))
	})
}

func plainID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// withLogging logs one line per request. It never logs headers, bodies or
// query strings, so API keys cannot end up in the log.
func (s *Server) withLogging(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		attrs := []any{"method", r.Method, "path", r.URL.Path, "status", rec.status,
			"bytes", rec.bytes, "duration_ms", time.Since(start).Milliseconds()}
		if st := stateFrom(r.Context()); st != nil && st.userID != "" {
			attrs = append(attrs, "user_id", st.userID)
		}
		// Probes come every few seconds: logged only at debug, unless failing.
		level := slog.LevelInfo
		if (r.URL.Path == "/healthz" || r.URL.Path == "/readyz") && rec.status < 500 {
			level = slog.LevelDebug
		}
		s.log(r).Log(r.Context(), level, "request", attrs...)
	})
}

// statusRecorder remembers the status and size of a response. It passes
// Flush through (SSE) and exposes the original writer to
// http.ResponseController.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusRecorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

func (w *statusRecorder) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// withRecovery turns a panicking handler into a logged 500 instead of a
// dropped connection. It needs to know whether the response has started;
// under withLogging it reads the recorder that is already there rather
// than wrapping every write (and every SSE flush) a second time.
func (s *Server) withRecovery(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec, ok := w.(*statusRecorder)
		if !ok {
			rec = &statusRecorder{ResponseWriter: w}
		}
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log(r).Error("panic", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if rec.status == 0 {
				s.Error(w, r, fmt.Errorf("panic: %v", v))
			}
		}()
		h.ServeHTTP(rec, r)
	})
}

// withHeaders sets the headers every response carries. It is the
// outermost middleware so that nothing answers without them: not an
// authentication failure, an unknown route, a wrong method nor a panic.
func withHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		h.ServeHTTP(w, r)
	})
}

// withQueryCheck refuses a query string that does not parse. net/url drops
// the pairs it cannot read without a word (any pair holding a ';' since Go
// 1.17, a bad %-escape), so ?type=tip; would list every note unfiltered
// instead of the filtered list the caller asked for.
func (s *Server) withQueryCheck(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := url.ParseQuery(r.URL.RawQuery); err != nil {
			s.Error(w, r, coachd.Errorf(coachd.EINVALID,
				"malformed query string (%v): separate parameters with & and percent-encode ;, %% and + in values", err))
			return
		}
		h.ServeHTTP(w, r)
	})
}

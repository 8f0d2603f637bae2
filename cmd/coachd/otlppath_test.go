package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
)

// TestOTLPEndpointPath: --otlp-endpoint http://collector:4318, as the
// README and the flag's help write it (and OTEL_EXPORTER_OTLP_ENDPOINT,
// a base URL), exported to http://collector:4318/: the exporter uses a
// URL's path as is, and a collector serves OTLP/HTTP traces at
// /v1/traces only, so no trace arrived. A base URL now gets /v1/traces;
// a URL already ending in it is used as is.
func TestOTLPEndpointPath(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		if r.URL.Path != "/v1/traces" && r.URL.Path != "/otlp/v1/traces" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collector.Close()
	defer otel.SetTracerProvider(otel.GetTracerProvider())

	for endpoint, want := range map[string]string{
		collector.URL:                "/v1/traces",
		collector.URL + "/":          "/v1/traces",
		collector.URL + "/v1/traces": "/v1/traces",
		collector.URL + "/otlp":      "/otlp/v1/traces",
	} {
		mu.Lock()
		paths = nil
		mu.Unlock()
		stop, err := setupTracing(context.Background(), endpoint, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		_, span := otel.Tracer("test").Start(context.Background(), "turn")
		span.End()
		if err := stop(context.Background()); err != nil {
			t.Errorf("%s: export: %v", endpoint, err)
		}
		mu.Lock()
		if len(paths) != 1 || paths[0] != want {
			t.Errorf("--otlp-endpoint %s exported to %q, want %q", endpoint, paths, want)
		}
		mu.Unlock()
	}
}

// TestOTLPEndpointCredentials: the exporter sends only a URL's host and
// path: a query key (?api-key=…) or a user and password in
// --otlp-endpoint were dropped without a word, the config line showed
// them (masked) as if in use, and the collector refused every export. A
// query is now a start error, a password a warning, each saying where
// credentials go, without them.
func TestOTLPEndpointCredentials(t *testing.T) {
	var logged strings.Builder
	logger := slog.New(slog.NewTextHandler(&logged, nil))
	_, err := setupTracing(context.Background(), "https://otlp.example.com/otlp?api-key=tok-not-shown", logger)
	if err == nil || !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_HEADERS") || strings.Contains(err.Error(), "tok-not-shown") {
		t.Errorf("a query: error %v, want where credentials go, without them", err)
	}
	stop, err := setupTracing(context.Background(), "https://instance:tok-not-shown@otlp.example.com", logger)
	if err != nil {
		t.Fatal(err)
	}
	stop(context.Background())
	if !strings.Contains(logged.String(), "level=WARN") || !strings.Contains(logged.String(), "OTEL_EXPORTER_OTLP_HEADERS") ||
		strings.Contains(logged.String(), "tok-not-shown") {
		t.Errorf("a password: logged %q, want a warning saying where credentials go, without them", logged.String())
	}
}

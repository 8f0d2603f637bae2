package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
)

// setupTracing exports spans over OTLP/HTTP to endpoint (a URL like
// http://collector:4318); "" leaves tracing off (a no-op provider). The
// exporter's errors go to logger (otelErrors). The returned function
// flushes and stops the exporter.
func setupTracing(ctx context.Context, endpoint string, logger *slog.Logger) (func(context.Context) error, error) {
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	if endpoint == "" {
		return func(context.Context) error { return nil }, nil
	}
	// The exporter takes anything: a URL without a scheme or a host (or
	// with a scheme it does not speak) exported nothing, or elsewhere,
	// without a word.
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--otlp-endpoint must be an http(s) URL like http://collector:4318, not %q", maskDSN(endpoint))
	}
	// The exporter sends a URL's host and path only: credentials in it
	// were dropped without a word, and the collector refused every export.
	const credentials = "give the collector's credentials as headers: OTEL_EXPORTER_OTLP_HEADERS=Authorization=Basic%20<base64>,api-key=<key>"
	if u.RawQuery != "" {
		return nil, fmt.Errorf("--otlp-endpoint %s: the exporter sends no query from the URL; %s",
			(&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String(), credentials)
	}
	if u.User != nil {
		logger.Warn("--otlp-endpoint: the exporter sends no user or password from the URL; "+credentials,
			"component", "otel", "otlp_endpoint", maskDSN(endpoint))
	}
	// The endpoint is a base URL, as OTEL_EXPORTER_OTLP_ENDPOINT is: the
	// exporter posts to a URL's path as is, and a collector takes traces
	// at /v1/traces only (http://collector:4318 exported to "/", a 404).
	if !strings.HasSuffix(u.Path, "/v1/traces") {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
		u.RawPath = ""
	}
	// Before the exporter, which logs what it cannot parse of the
	// OTEL_EXPORTER_OTLP_* environment as it is made.
	otel.SetLogger(newOTelLog(logger))
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(u.String()))
	if err != nil {
		return nil, fmt.Errorf("--otlp-endpoint: %w", err)
	}
	errs := newOTelErrors(logger, time.Now, time.Minute)
	otel.SetErrorHandler(errs)
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("coachd"), semconv.ServiceVersion(versionString()))))
	otel.SetTracerProvider(tp)
	return func(ctx context.Context) error {
		err := tp.Shutdown(ctx)
		errs.flush()
		return err
	}, nil
}

// otelErrors is the OpenTelemetry SDK's error handler: left unset, the
// SDK prints through the standard library's logger, a plain line in a
// JSON log, once per failed export (every few seconds while a collector
// is down). It logs one warning per interval through the server's
// logger, with the number of errors left out since the last, and masks
// any URL's password and secret query parameters.
type otelErrors struct {
	logger *slog.Logger
	now    func() time.Time
	every  time.Duration

	mu         sync.Mutex
	last       time.Time // of the last warning logged; zero: none yet
	suppressed int
}

func newOTelErrors(logger *slog.Logger, now func() time.Time, every time.Duration) *otelErrors {
	return &otelErrors{logger: logger.With("component", "otel"), now: now, every: every}
}

var urlInText = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>]+`)

// Handle logs err, or counts it when a warning was logged less than an
// interval ago.
func (h *otelErrors) Handle(err error) {
	if err == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	if !h.last.IsZero() && now.Sub(h.last) < h.every {
		h.suppressed++
		return
	}
	h.last = now
	msg := urlInText.ReplaceAllStringFunc(err.Error(), maskDSN)
	h.logger.Warn("telemetry export failed", "error", msg, "errors_not_logged", h.suppressed, "next_after", h.every.String())
	h.suppressed = 0
}

// flush logs how many errors were left out since the last warning.
func (h *otelErrors) flush() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.suppressed > 0 {
		h.logger.Warn("telemetry export errors not logged", "errors_not_logged", h.suppressed)
		h.suppressed = 0
	}
}

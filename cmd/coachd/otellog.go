package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/go-logr/logr"
)

// otelLog is the OpenTelemetry SDK's internal logger (otel.SetLogger):
// left unset, it prints through its own standard-library logger, outside
// coachd's log format, and with the values it was given in clear: a
// malformed OTEL_EXPORTER_OTLP_HEADERS entry, the collector's token with
// it, is logged as its "input". Here its warnings and errors go to
// coachd's logger (component otel); a value logged as "input" is
// withheld, and URLs in the others are masked (maskDSN).
type otelLog struct {
	logger *slog.Logger
}

// otelWarnLevel is the SDK's verbosity of warnings (global.Warn: 1);
// info (4) and debug (8) are left out.
const otelWarnLevel = 1

func newOTelLog(logger *slog.Logger) logr.Logger {
	return logr.New(otelLog{logger: logger.With("component", "otel")})
}

func (otelLog) Init(logr.RuntimeInfo)          {}
func (otelLog) Enabled(level int) bool         { return level <= otelWarnLevel }
func (s otelLog) WithName(string) logr.LogSink { return s }

func (s otelLog) Info(_ int, msg string, kv ...any) {
	s.logger.LogAttrs(context.Background(), slog.LevelWarn, msg, otelAttrs(kv)...)
}

func (s otelLog) Error(err error, msg string, kv ...any) {
	attrs := otelAttrs(kv)
	if err != nil {
		attrs = append(attrs, slog.String("error", urlInText.ReplaceAllStringFunc(err.Error(), maskDSN)))
	}
	s.logger.LogAttrs(context.Background(), slog.LevelWarn, msg, attrs...)
}

func (s otelLog) WithValues(kv ...any) logr.LogSink {
	args := make([]any, 0, len(kv))
	for _, a := range otelAttrs(kv) {
		args = append(args, a)
	}
	return otelLog{logger: s.logger.With(args...)}
}

// otelAttrs turns logr's key/value pairs into attributes, the value of
// "input" (what the SDK could not parse: a header, a URL) withheld.
func otelAttrs(kv []any) []slog.Attr {
	var attrs []slog.Attr
	for i := 0; i+1 < len(kv); i += 2 {
		key := fmt.Sprint(kv[i])
		if key == "input" {
			attrs = append(attrs, slog.String(key, "[redacted]"))
			continue
		}
		attrs = append(attrs, slog.String(key, urlInText.ReplaceAllStringFunc(fmt.Sprint(kv[i+1]), maskDSN)))
	}
	return attrs
}

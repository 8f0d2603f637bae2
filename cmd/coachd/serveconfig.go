package main

import "log/slog"

// LogValue is the effective configuration, for the start-up log. It
// masks secrets: the admin key and a URL's password never reach the log.
func (c serveConfig) LogValue() slog.Value {
	admin := "(unset: admin routes disabled)"
	if c.AdminKey != "" {
		admin = "(set)"
	}
	return slog.GroupValue(
		slog.String("addr", c.Addr),
		slog.String("db", maskDSN(c.DB)),
		slog.String("admin_key", admin),
		slog.Bool("demo", c.Demo),
		slog.String("log_format", c.LogFormat),
		slog.Any("model", c.Model),
		slog.Any("budget", c.Budget),
		slog.Any("edge", c.Edge),
		slog.Any("voice", c.Voice),
		slog.String("pack", c.Pack),
		slog.String("workspaces", c.Workspaces),
		slog.String("webhook_allow", c.WebhookAllow),
		slog.Bool("webhook_signing", c.WebhookSecret != ""),
		slog.String("cors_origins", c.CORSOrigins),
		slog.String("log_level", c.LogLevel),
		slog.Duration("shutdown_grace", c.ShutdownGrace),
		slog.Duration("event_retention", c.EventRetention),
		slog.String("otlp_endpoint", maskDSN(c.OTLPEndpoint)),
		slog.String("metrics_addr", c.MetricsAddr),
		slog.String("pprof", c.Pprof),
		c.jwtLog(),
	)
}

// jwtLog is the JWT settings, or "off".
func (c serveConfig) jwtLog() slog.Attr {
	if c.JWKSURL == "" {
		return slog.String("jwt", "off")
	}
	return slog.Group("jwt", slog.String("jwks_url", maskDSN(c.JWKSURL)), slog.String("issuer", c.JWTIssuer),
		slog.String("audience", c.JWTAudience), slog.String("algorithms", c.JWTAlgorithms))
}

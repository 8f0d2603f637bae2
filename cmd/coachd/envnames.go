package main

import (
	"slices"
	"strings"
)

// knownEnv are the COACHD_* variables a coachd command reads
// (TestKnownEnv holds the list to the source). COACHD_RUN is the mark a
// review sets for its own test runs.
var knownEnv = []string{
	"COACHD_ADDR", "COACHD_ADMIN_KEY", "COACHD_BODY_TIMEOUT", "COACHD_BUDGET_PERIOD",
	"COACHD_BUDGET_UNIT", "COACHD_CORS_ORIGINS", "COACHD_COUNT_TOKENS", "COACHD_DB",
	"COACHD_DEFAULT_BUDGET", "COACHD_DEMO", "COACHD_DEMO_DELAY", "COACHD_EVENT_RETENTION",
	"COACHD_HEADER_TIMEOUT", "COACHD_HEARTBEAT", "COACHD_JWT_ALGORITHMS", "COACHD_JWT_AUDIENCE",
	"COACHD_JWT_ISSUER", "COACHD_JWT_JWKS_URL", "COACHD_KEY", "COACHD_LOG_FORMAT",
	"COACHD_LOG_LEVEL", "COACHD_MAX_CONNS", "COACHD_MAX_STREAMS_PER_USER", "COACHD_METRICS_ADDR",
	"COACHD_MODEL", "COACHD_MODEL_TIMEOUT", "COACHD_MONTHLY_MESSAGES", "COACHD_NO_PROMPT_CACHE",
	"COACHD_OPENAI_API_KEY", "COACHD_OPENAI_API_KEY_FILE", "COACHD_OTLP_ENDPOINT", "COACHD_PACK",
	"COACHD_PPROF", "COACHD_PROVIDER", "COACHD_RATE_LIMIT", "COACHD_RESERVATION_EXPIRY",
	"COACHD_RUN", "COACHD_SCRATCH", "COACHD_SHARE_DB", "COACHD_SHUTDOWN_GRACE", "COACHD_TOOL_RATE_LIMIT",
	"COACHD_TTS_MODEL", "COACHD_TURN_LEASE", "COACHD_URL", "COACHD_VOICE",
	"COACHD_VOICE_MODEL", "COACHD_VOICE_PROVIDER_URL", "COACHD_VOICE_SECRET_TTL",
	"COACHD_VOICE_TRANSCRIPTION_MODEL", "COACHD_WEBHOOK_ALLOW", "COACHD_WEBHOOK_SECRET",
	"COACHD_WORKSPACES", "COACHD_WRITE_TIMEOUT",
}

// unknownEnv lists the names of environ's COACHD_* variables that no
// command reads, sorted: a typo (COACHD_DATABSE) leaves its setting at
// the default, silently but for this.
func unknownEnv(environ []string) []string {
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "COACHD_") && !slices.Contains(knownEnv, name) && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

package coachd

import (
	"regexp"
	"slices"
)

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}`)

// ownEnv are the variables that hold coachd's own secrets: its model
// keys, its admin and client keys, its database, its webhook signing key,
// its telemetry credentials, and what the Postgres driver reads for its
// password. A pack may come from a shared repo, and what its ${NAME} reads
// goes to a webhook's host, an MCP server or a data source's driver: it
// reads none of these. An operator who means to pass one on sets the value
// under another name.
var ownEnv = []string{
	"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY",
	// What the Bedrock model signs with (the AWS default chain).
	"AWS_BEARER_TOKEN_BEDROCK", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
	"COACHD_ADMIN_KEY", "COACHD_KEY", "COACHD_DB", "COACHD_OPENAI_API_KEY",
	"COACHD_WEBHOOK_SECRET", "COACHD_OTLP_ENDPOINT", "DATABASE_URL", "PGPASSWORD",
	"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_HEADERS",
	"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
	"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
}

// OwnEnv reports whether name is one of coachd's own secret variables,
// which a pack's ${NAME} may not read.
func OwnEnv(name string) bool { return slices.Contains(ownEnv, name) }

// EnvProblem says why the reference ${name} resolved to nothing: the
// variable is unset, or it is coachd's own secret. It names the variable,
// never its value.
func EnvProblem(name string) string {
	if OwnEnv(name) {
		return "${" + name + "} is coachd's own secret, which a pack may not read: set the value under another name for the pack"
	}
	return "environment variable " + name + " is not set"
}

// ExpandEnv resolves the ${NAME} and ${NAME:-default} references of a pack
// file's value with getenv; missing is called for a NAME that has neither
// a value nor a default (it is replaced by ""), and for one of coachd's
// own secrets (OwnEnv), whatever its value or default: getenv is not asked.
func ExpandEnv(s string, getenv func(string) string, missing func(name string)) string {
	return envRef.ReplaceAllStringFunc(s, func(ref string) string {
		m := envRef.FindStringSubmatch(ref)
		if OwnEnv(m[1]) {
			missing(m[1])
			return ""
		}
		if v := getenv(m[1]); v != "" {
			return v
		}
		if m[2] != "" {
			return m[2][2:]
		}
		missing(m[1])
		return ""
	})
}

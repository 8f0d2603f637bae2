package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestStartLogShowsEffectiveConfig: the "starting coachd" line is where
// an operator reads the configuration a process runs with, but it left
// out the log level, the shutdown grace, the event retention, the turn
// lease, the heartbeat, count_tokens, the demo delay, the trace
// exporter, the keyless /metrics listener, pprof and JWT: whether
// tracing was on, or a key-less listener open, could not be told from
// the log. They are there now, URLs with their passwords masked.
func TestStartLogShowsEffectiveConfig(t *testing.T) {
	out, err := runUntilListening(t, "serve", "--db", filepath.Join(t.TempDir(), "c.db"),
		"--shutdown-grace", "4s", "--event-retention", "2h", "--turn-lease", "3s",
		"--heartbeat", "7s", "--count-tokens", "--demo-delay", "5ms",
		"--otlp-endpoint", "http://otel:hunter2@127.0.0.1:1", "--metrics-addr", "127.0.0.1:0", "--pprof", "127.0.0.1:0",
		"--jwt-jwks-url", "https://idp.example.com/jwks.json", "--jwt-issuer", "https://idp.example.com/", "--jwt-audience", "coachd")
	if err != nil {
		t.Fatalf("serve: %v\n%s", err, out)
	}
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, `msg="starting coachd"`) {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("no start line:\n%s", out)
	}
	for _, want := range []string{
		"config.log_level=info", "config.shutdown_grace=4s", "config.event_retention=2h0m0s",
		"config.otlp_endpoint=http://otel:xxxxx@127.0.0.1:1", "config.metrics_addr=127.0.0.1:0", "config.pprof=127.0.0.1:0",
		"config.jwt.jwks_url=https://idp.example.com/jwks.json", "config.jwt.issuer=https://idp.example.com/",
		"config.jwt.audience=coachd", "config.jwt.algorithms=RS256,ES256",
		"config.model.turn_lease=3s", "config.model.heartbeat=7s", "config.model.count_tokens=true", "config.model.demo_delay=5ms",
	} {
		if !strings.Contains(line, " "+want+" ") && !strings.HasSuffix(line, " "+want) {
			t.Errorf("the start line has no %s:\n%s", want, line)
		}
	}
	if strings.Contains(out, "hunter2") {
		t.Errorf("the log shows the OTLP endpoint's password:\n%s", out)
	}
}

package main

import (
	"encoding/json"
	"net"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// TestSecurityOTelHeadersNotLogged: OTEL_EXPORTER_OTLP_HEADERS written as
// "Authorization: Bearer <token>" (a colon where the spec wants "=") made
// the OpenTelemetry SDK print, through its own standard-library logger,
// `"msg"="parse headers" "error"="missing '=" "input"="Authorization:
// Bearer <token>"`: the collector's token in clear, outside the JSON log.
// The SDK's log now goes through coachd's logger, its values masked.
func TestSecurityOTelHeadersNotLogged(t *testing.T) {
	const token = "sekrit-collector-token-0123"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String()
	ln.Close()
	p := MustStart(t, []string{"COACHD_LOG_FORMAT=json", "COACHD_OTLP_ENDPOINT=" + refused,
		"OTEL_EXPORTER_OTLP_HEADERS=Authorization: Bearer " + token}, "--demo", "--db", t.TempDir()+"/c.db")
	p.stderr.waitFor(t, regexp.MustCompile(`"msg":"parse headers"[^\n]*"component":"otel"`))
	p.cmd.Process.Signal(syscall.SIGTERM)
	<-p.exited
	out := p.stderr.String()
	if strings.Contains(out, token) {
		t.Errorf("the collector's token shows in the log:\n%s", out)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !json.Valid([]byte(line)) {
			t.Errorf("a line that is not the JSON log's: %s", line)
		}
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSecurityOTelErrorsLogged: with a collector that refuses, the
// OpenTelemetry SDK printed each failed export through the standard
// library's logger: a plain "2026/11/29 18:06:16 traces export: …" line
// in a JSON log, every few seconds while the collector is down. It is now
// a warning in the server's own log format, component otel.
func TestSecurityOTelErrorsLogged(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String()
	ln.Close()
	p := MustStart(t, []string{"COACHD_LOG_FORMAT=json", "COACHD_OTLP_ENDPOINT=" + refused, "OTEL_BSP_SCHEDULE_DELAY=20"},
		"--demo", "--db", t.TempDir()+"/c.db")
	req, _ := http.NewRequest(http.MethodPost, p.url+"/v1/chat/stream", strings.NewReader(`{"message":"hi"}`))
	req.Header.Set("Authorization", "Bearer "+p.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	p.stderr.waitFor(t, regexp.MustCompile(`"component":"otel"[^\n]*connection refused`))
	p.cmd.Process.Signal(syscall.SIGTERM)
	<-p.exited
	for _, line := range strings.Split(strings.TrimSpace(p.stderr.String()), "\n") {
		if !json.Valid([]byte(line)) {
			t.Errorf("a line that is not the JSON log's: %s", line)
		}
	}
}

// TestOTelErrorsRateLimited: a down collector fails an export every few
// seconds; one warning is logged a minute, saying how many were left
// out, and a URL's password and secret query parameters are masked.
func TestOTelErrorsRateLimited(t *testing.T) {
	var buf bytes.Buffer
	now := time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC)
	h := newOTelErrors(slog.New(slog.NewJSONHandler(&buf, nil)), func() time.Time { return now }, time.Minute)
	exportErr := errors.New(`traces export: Post "https://otel:pw-not-shown@collector.example/v1/traces?api-key=q-not-shown": dial tcp: connection refused`)
	records := func() []map[string]any {
		var out []map[string]any
		for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			var r map[string]any
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("%v: %s", err, line)
			}
			out = append(out, r)
		}
		return out
	}
	for range 100 {
		h.Handle(exportErr)
		now = now.Add(time.Second / 2)
	}
	if got := records(); len(got) != 1 || got[0]["component"] != "otel" || got[0]["level"] != "WARN" {
		t.Fatalf("100 errors in 50s logged %d records, want one warning:\n%s", len(got), buf.String())
	}
	now = now.Add(10 * time.Second)
	h.Handle(exportErr)
	got := records()
	if len(got) != 2 || got[1]["errors_not_logged"] != float64(99) {
		t.Fatalf("a minute later: %d records, want a second saying 99 were left out:\n%s", len(got), buf.String())
	}
	h.Handle(exportErr)
	h.flush()
	if got := records(); len(got) != 3 || got[2]["errors_not_logged"] != float64(1) {
		t.Fatalf("flush: want a last record saying 1 was left out:\n%s", buf.String())
	}
	for _, s := range []string{"pw-not-shown", "q-not-shown"} {
		if strings.Contains(buf.String(), s) {
			t.Errorf("%s shows in the log:\n%s", s, buf.String())
		}
	}
}

package main

import (
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestUpstreamDownIsLogged: with the model's upstream unreachable (here
// a port nothing listens on) a turn fails with api_error "model request
// failed", and the log said no more than that: nothing of why (refused,
// DNS, TLS, a proxy). The turn's upstream failure is now logged with its
// cause, once, at warning.
func TestUpstreamDownIsLogged(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	env := map[string]string{"COACHD_ADDR": "127.0.0.1:0", "ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": dead}
	p := MustServe(t, env, "--db", filepath.Join(t.TempDir(), "c.db"), "--demo")
	key := regexp.MustCompile(`ck_[A-Za-z0-9_-]+`).FindString(p.stdout.String())
	req, _ := http.NewRequest(http.MethodPost, p.url+"/v1/chat/stream", strings.NewReader(`{"message":"hi"}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(body), "api_error") {
		t.Fatalf("a turn with the upstream down: %s", body)
	}
	if err := p.stop(t); err != nil {
		t.Fatal(err)
	}
	logs := p.stderr.String()
	if !regexp.MustCompile(`level=WARN[^\n]*connection refused`).MatchString(logs) {
		t.Errorf("logs name no cause of the upstream failure:\n%s", logs)
	}
	if strings.Contains(logs, "sk-test") {
		t.Errorf("the API key is in the logs")
	}
}

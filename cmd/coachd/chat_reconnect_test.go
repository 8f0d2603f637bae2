package main

import (
	"context"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/internal/cutproxy"
)

// TestChatReconnects: coachd chat loses its stream mid-reply; it says it
// is reconnecting, picks the turn up after the last event it showed, and
// prints the reply exactly once.
func TestChatReconnects(t *testing.T) {
	fake := anthropictest.NewServer()
	defer fake.Close()
	env := map[string]string{"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": fake.URL(), "COACHD_ADDR": "127.0.0.1:0"}
	p := MustServe(t, env, "--db", filepath.Join(t.TempDir(), "c.db"), "--demo")
	key := apiKeyRe.FindStringSubmatch(p.stdout.String())[1]
	u, _ := url.Parse(p.url)
	proxy := cutproxy.New(t, u.Host)
	proxy.CutOnce("event: content_delta") // a network drop mid-reply
	reply := "Leave at five, queue at the airport, then take the downtown lunch wave."
	fake.Enqueue(anthropictest.Text(reply, 4).Paced(0, 15*time.Millisecond))
	chatEnv := getenvFrom(map[string]string{"COACHD_URL": proxy.URL(), "COACHD_KEY": key})
	out, errOut := &syncBuffer{}, &syncBuffer{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := runChat(ctx, []string{"plan my day"}, chatEnv, strings.NewReader(""), out, errOut); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, errOut)
	}
	if proxy.Cuts() != 1 || !strings.Contains(errOut.String(), "(reconnecting…)") {
		t.Fatalf("no drop or no notice: %d cut, stderr %q", proxy.Cuts(), errOut)
	}
	if got := strings.TrimSpace(out.String()); got != reply {
		t.Errorf("printed %q, want %q", got, reply)
	}
}

// TestChatResumesAfterRestart: the server is stopped mid-reply; its
// stream ends with the retryable server_shutdown notice. coachd chat does
// not print it as the turn's error: it reconnects, and the restarted
// server gives it the rest of the turn from the log.
func TestChatResumesAfterRestart(t *testing.T) {
	fake := anthropictest.NewServer()
	defer fake.Close()
	env := map[string]string{"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": fake.URL(), "COACHD_ADDR": "127.0.0.1:0"}
	db := filepath.Join(t.TempDir(), "c.db")
	a := MustServe(t, env, "--db", db, "--demo", "--shutdown-grace", "200ms")
	key := apiKeyRe.FindStringSubmatch(a.stdout.String())[1]
	u, _ := url.Parse(a.url)
	proxy := cutproxy.New(t, u.Host)
	fake.Enqueue(anthropictest.Text("Halfway through a long answer", 4).StallAfter(6))

	chatEnv := getenvFrom(map[string]string{"COACHD_URL": proxy.URL(), "COACHD_KEY": key})
	out, errOut := &syncBuffer{}, &syncBuffer{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- runChat(ctx, []string{"tell me everything"}, chatEnv, strings.NewReader(""), out, errOut)
	}()
	out.waitFor(t, regexp.MustCompile(`Halfway`))
	if err := a.stop(t); err != nil {
		t.Fatalf("stop: %v", err)
	}
	b := MustServe(t, env, "--db", db)
	ub, _ := url.Parse(b.url)
	proxy.Retarget(ub.Host)

	if err := <-done; err != nil {
		t.Fatalf("chat: %v\n%s\n%s", err, out, errOut)
	}
	if strings.Contains(out.String(), "server_shutdown") || !strings.Contains(errOut.String(), "(reconnecting…)") {
		t.Fatalf("the shutdown notice was printed, or no reconnect:\nstdout %q\nstderr %q", out, errOut)
	}
	// The turn's end, from the restarted server's log: stopped with the
	// old process.
	if !strings.Contains(out.String(), "(turn ended:") {
		t.Errorf("no end of the turn after the restart: %q", out)
	}
}

package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/internal/cutproxy"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

// TestChatResumesAfterDatabaseOutagePG: coachd chat, behind a load
// balancer in front of two replicas sharing one Postgres, follows a turn
// from the replica that does not run it (its stream was cut and picked up
// there) when Postgres restarts. The follower ends with the retryable
// unavailable error carrying last_event_id, and the replica answers
// 503 unavailable while the database is down. coachd chat printed
// "[error unavailable]" and returned as if the turn were over, while the
// turn went on: the rest of the reply never reached the user. It now
// reconnects after the event it showed last, and prints the reply whole.
func TestChatResumesAfterDatabaseOutagePG(t *testing.T) {
	pg := pgtest.NewServer(t)
	dsn := pg.NewDatabase(t)
	fake := anthropictest.NewServer()
	defer fake.Close()
	fake.Enqueue(
		anthropictest.Blocks(anthropictest.TextBlock("Checking your notes.", 4), anthropictest.ToolUse("toolu_n", "list_notes", `{}`)),
		anthropictest.Text("Leave at five.", 4))
	// The turn's second model request waits for release: the turn runs
	// through the outage.
	held, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/messages" && calls.Add(1) == 2 {
			close(held)
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		fake.Handler().ServeHTTP(w, r)
	}))
	defer gate.Close()
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	env := map[string]string{"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": gate.URL, "COACHD_ADDR": "127.0.0.1:0"}
	a := MustServe(t, env, "--db", dsn, "--demo")
	key := apiKeyRe.FindStringSubmatch(a.stdout.String())[1]
	b := MustServe(t, env, "--db", dsn)
	ua, _ := url.Parse(a.url)
	ub, _ := url.Parse(b.url)
	proxy := cutproxy.New(t, ua.Host)

	chatEnv := getenvFrom(map[string]string{"COACHD_URL": proxy.URL(), "COACHD_KEY": key})
	out, errOut := &syncBuffer{}, &syncBuffer{}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- runChat(ctx, []string{"plan my day"}, chatEnv, strings.NewReader(""), out, errOut)
	}()
	select {
	case <-held:
	case err := <-done:
		t.Fatalf("chat ended before the turn's second round: %v\n%s\n%s", err, out, errOut)
	}
	out.waitFor(t, regexp.MustCompile(`list_notes: `))
	// The stream is cut; the balancer sends the reconnect to b, which
	// follows the turn (running on a) from the log.
	proxy.Retarget(ub.Host)
	proxy.Cut()
	for to := range proxy.Answered {
		if to == ub.Host {
			break
		}
	}
	pg.Stop()
	select {
	case err := <-done:
		t.Fatalf("chat gave up while the database was down: %v\nstdout %q\nstderr %q", err, out, errOut)
	case <-waitMatch(errOut, regexp.MustCompile(`(?s)reconnecting.*reconnecting`)):
	}
	pg.Start(t)
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("chat: %v\nstdout %q\nstderr %q", err, out, errOut)
	}
	got := out.String()
	if strings.Contains(got, "[error") || strings.Count(got, "Leave at five.") != 1 || strings.Count(got, "Checking your notes.") != 1 {
		t.Errorf("printed %q, want the reply whole, once, and no error", got)
	}
}

// waitMatch returns a channel closed once b matches re.
func waitMatch(b *syncBuffer, re *regexp.Regexp) <-chan struct{} {
	c := make(chan struct{})
	go func() {
		for {
			b.mu.Lock()
			m := re.MatchString(b.buf.String())
			if !m && b.grown == nil {
				b.grown = make(chan struct{})
			}
			grown := b.grown
			b.mu.Unlock()
			if m {
				close(c)
				return
			}
			<-grown
		}
	}()
	return c
}

// TestChatREPLGoesOnWhileDatabaseDownPG: a message typed at coachd chat's
// prompt while Postgres restarts is refused, 503 unavailable, "retry in a
// moment". The prompt ended there: chat exited with the error, and the
// conversation's id, never shown at the prompt, with it. It now says
// why and prompts again; the same message, sent again once the database
// is back, gets its reply in the same conversation.
func TestChatREPLGoesOnWhileDatabaseDownPG(t *testing.T) {
	pg := pgtest.NewServer(t)
	dsn := pg.NewDatabase(t)
	fake := anthropictest.NewServer()
	defer fake.Close()
	fake.Enqueue(anthropictest.Text("Morning.", 4), anthropictest.Text("Leave at five.", 4))
	env := map[string]string{"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": fake.URL(), "COACHD_ADDR": "127.0.0.1:0"}
	p := MustServe(t, env, "--db", dsn, "--demo")
	key := apiKeyRe.FindStringSubmatch(p.stdout.String())[1]
	chatEnv := getenvFrom(map[string]string{"COACHD_URL": p.url, "COACHD_KEY": key})
	in, typed := io.Pipe()
	out, errOut := &syncBuffer{}, &syncBuffer{}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- runChat(ctx, nil, chatEnv, in, out, errOut) }()
	prompts := func(n int) {
		t.Helper()
		select {
		case err := <-done:
			t.Fatalf("chat ended: %v\nstdout %q\nstderr %q", err, out, errOut)
		case <-waitMatch(out, regexp.MustCompile(`(?s)`+strings.Repeat(`you> .*`, n-1)+`you> `)):
		}
	}
	prompts(1)
	io.WriteString(typed, "good morning\n")
	prompts(2)
	pg.Stop()
	io.WriteString(typed, "when should I drive?\n")
	prompts(3)
	pg.Start(t)
	io.WriteString(typed, "when should I drive?\n")
	prompts(4)
	typed.Close()
	if err := <-done; err != nil {
		t.Fatalf("chat: %v\nstdout %q\nstderr %q", err, out, errOut)
	}
	if !strings.Contains(errOut.String(), "unavailable") || !strings.Contains(out.String(), "Leave at five.") {
		t.Errorf("the refusal not said, or no reply after it:\nstdout %q\nstderr %q", out, errOut)
	}
	// The reply came in the same conversation: the model saw the
	// first exchange.
	reqs := fake.Requests()
	if last := reqs[len(reqs)-1]; len(last.Messages()) != 3 {
		t.Errorf("the message after the refusal went to a conversation of %d messages, want 3 (the same one)", len(last.Messages()))
	}
}

package main

import (
	"context"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/internal/cutproxy"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

// followedTurnPG is a turn running on replica a, behind a load balancer
// whose reconnects go to replica b (which follows the turn from the log),
// with coachd chat showing it; the turn's second model request is held
// until release is called.
type followedTurnPG struct {
	pg       *pgtest.Server
	out, err *syncBuffer
	done     chan error
	release  func()
}

func startFollowedTurnPG(t *testing.T, chatArgs ...string) *followedTurnPG {
	t.Helper()
	pg := pgtest.NewServer(t)
	dsn := pg.NewDatabase(t)
	fake := anthropictest.NewServer()
	t.Cleanup(fake.Close)
	fake.Enqueue(
		anthropictest.Blocks(anthropictest.TextBlock("Checking your notes.", 4), anthropictest.ToolUse("toolu_n", "list_notes", `{}`)),
		anthropictest.Text("Leave at five.", 4))
	gate, held, release := holdModelCall(t, fake, 2)
	env := map[string]string{"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": gate, "COACHD_ADDR": "127.0.0.1:0"}
	a := MustServe(t, env, "--db", dsn, "--demo")
	key := apiKeyRe.FindStringSubmatch(a.stdout.String())[1]
	b := MustServe(t, env, "--db", dsn)
	ua, _ := url.Parse(a.url)
	ub, _ := url.Parse(b.url)
	proxy := cutproxy.New(t, ua.Host)

	chatEnv := getenvFrom(map[string]string{"COACHD_URL": proxy.URL(), "COACHD_KEY": key})
	f := &followedTurnPG{pg: pg, out: &syncBuffer{}, err: &syncBuffer{}, done: make(chan error, 1), release: release}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	go func() {
		f.done <- runChat(ctx, append(chatArgs, "plan my day"), chatEnv, strings.NewReader(""), f.out, f.err)
	}()
	select {
	case <-held:
	case err := <-f.done:
		t.Fatalf("chat ended before the turn's second round: %v\n%s\n%s", err, f.out, f.err)
	}
	f.out.waitFor(t, regexp.MustCompile(`list_notes: `))
	proxy.Retarget(ub.Host)
	proxy.Cut()
	for to := range proxy.Answered {
		if to == ub.Host {
			break
		}
	}
	return f
}

// outlast stops Postgres until chat has reconnected n times, starts it
// again, lets the turn go on, and wants chat to print the reply whole,
// once, and no error.
func (f *followedTurnPG) outlast(t *testing.T, n int) {
	t.Helper()
	f.pg.Stop()
	select {
	case err := <-f.done:
		t.Fatalf("chat gave up while the database was down: %v\nstdout %q\nstderr %q", err, f.out, f.err)
	case <-waitMatch(f.err, regexp.MustCompile(`(?s)`+strings.Repeat(`reconnecting.*`, n))):
	}
	f.pg.Start(t)
	f.release()
	if err := <-f.done; err != nil {
		t.Fatalf("chat: %v\nstdout %q\nstderr %q", err, f.out, f.err)
	}
	got := f.out.String()
	if strings.Contains(got, "[error") || strings.Count(got, "Leave at five.") != 1 || strings.Count(got, "Checking your notes.") != 1 {
		t.Errorf("printed %q, want the reply whole, once, and no error", got)
	}
}

// TestChatWaitsOutLongDatabaseOutagePG: Postgres down for longer than
// coachd chat's five reconnects (about 8 s) while the replica answers
// 503 unavailable with Retry-After: chat gave up with "the database is
// unavailable for now: retry in a moment" and exit 1, though the turn
// went on and a restart or failover often takes longer. It now keeps
// reconnecting, backing off, and prints the reply whole once the
// database is back.
func TestChatWaitsOutLongDatabaseOutagePG(t *testing.T) {
	startFollowedTurnPG(t).outlast(t, 7)
}

// TestChatGivesUpReconnectingPG: with the database down for good, coachd
// chat stops reconnecting after --reconnect-for, fails (a non-zero exit),
// and says so, with the session to continue.
func TestChatGivesUpReconnectingPG(t *testing.T) {
	f := startFollowedTurnPG(t, "--reconnect-for", "2s")
	f.pg.Stop()
	err := <-f.done
	if err == nil || !regexp.MustCompile(`gave up reconnecting after 2s.*unavailable`).MatchString(err.Error()) {
		t.Fatalf("chat returned %v, want it to say it gave up reconnecting after 2s, and why\nstderr %q", err, f.err)
	}
	if !strings.Contains(f.err.String(), "session: sess_") {
		t.Errorf("stderr %q, want the session to continue with", f.err)
	}
	f.pg.Start(t)
}

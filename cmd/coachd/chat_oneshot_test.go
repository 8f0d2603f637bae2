package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

// TestChatOneShotWaitsOutDatabaseOutagePG: `coachd chat "message"` sent
// while Postgres restarts is refused, 503 unavailable, "retry in a
// moment". The one-shot exited at once with the error, while a turn it
// had begun would have been reconnected to for --reconnect-for: a script
// calling it failed for a restart of seconds. It now sends the message
// again, with its key, until the database is back (within
// --reconnect-for), and prints the reply: one model call.
func TestChatOneShotWaitsOutDatabaseOutagePG(t *testing.T) {
	pg := pgtest.NewServer(t)
	dsn := pg.NewDatabase(t)
	fake := anthropictest.NewServer()
	defer fake.Close()
	fake.Enqueue(anthropictest.Text("Leave at five.", 4), anthropictest.Text("a second turn", 4))
	env := map[string]string{"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": fake.URL(), "COACHD_ADDR": "127.0.0.1:0"}
	p := MustServe(t, env, "--db", dsn, "--demo")
	key := apiKeyRe.FindStringSubmatch(p.stdout.String())[1]
	chatEnv := getenvFrom(map[string]string{"COACHD_URL": p.url, "COACHD_KEY": key})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pg.Stop()
	out, errOut := &syncBuffer{}, &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- runChat(ctx, []string{"--reconnect-for", "50s", "when should I drive?"}, chatEnv, strings.NewReader(""), out, errOut)
	}()
	select {
	case <-waitMatch(errOut, regexp.MustCompile(`retrying`)):
	case err := <-done:
		t.Fatalf("the refused message was not sent again: %v\nstdout %q\nstderr %q", err, out, errOut)
	}
	pg.Start(t)
	if err := <-done; err != nil {
		t.Fatalf("%v\nstdout %q\nstderr %q", err, out, errOut)
	}
	if got := strings.TrimSpace(out.String()); got != "Leave at five." {
		t.Errorf("printed %q, want the reply", got)
	}
	if n := len(fake.Requests()); n != 1 {
		t.Errorf("the model was asked %d times, want 1", n)
	}
}

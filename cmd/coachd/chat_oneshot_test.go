package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestChatOneShotWaitsOutDatabaseOutagePG: `coachd chat "message"` sent
// while Postgres restarts is refused, 503 unavailable, "retry in a
// moment". The one-shot exited at once with the error, while a turn it
// had begun would have been reconnected to for --reconnect-for: a script
// calling it failed for a restart of seconds. It now sends the message
// again, with its key, until the database is back (within
// --reconnect-for), and prints the reply: one model call.
func TestChatOneShotWaitsOutDatabaseOutagePG(t *testing.T) {
	pg, fake, chatEnv := chatOnPG(t, "Leave at five.", "a second turn")
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

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
	startFollowedTurnPG(t).outlast(t, 2)
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
	pg, _, chatEnv := chatOnPG(t, "Morning.", "Leave at five.")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := startREPL(ctx, nil, chatEnv)
	c.prompts(t, 1)
	c.say(t, "good morning", 2)
	pg.Stop()
	c.say(t, "when should I drive?", 3)
	pg.Start(t)
	c.say(t, "when should I drive?", 4)
	c.end(t)
	if !strings.Contains(c.err.String(), "unavailable") || !strings.Contains(c.out.String(), "Leave at five.") {
		t.Errorf("the refusal not said, or no reply after it:\nstdout %q\nstderr %q", c.out, c.err)
	}
}

// chatOnPG serves coachd --demo on a Postgres server of its own, its
// model a fake that answers replies in turn, and returns that server,
// the fake and the environment coachd chat reads to talk to coachd.
func chatOnPG(t *testing.T, replies ...string) (*pgtest.Server, *anthropictest.Server, func(string) string) {
	t.Helper()
	pg := pgtest.NewServer(t)
	dsn := pg.NewDatabase(t)
	fake := anthropictest.NewServer()
	t.Cleanup(fake.Close)
	for _, r := range replies {
		fake.Enqueue(anthropictest.Text(r, 4))
	}
	env := map[string]string{"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": fake.URL(), "COACHD_ADDR": "127.0.0.1:0"}
	p := MustServe(t, env, "--db", dsn, "--demo")
	key := apiKeyRe.FindStringSubmatch(p.stdout.String())[1]
	return pg, fake, getenvFrom(map[string]string{"COACHD_URL": p.url, "COACHD_KEY": key})
}

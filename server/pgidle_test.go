package server_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/client"
	"github.com/coachd/coachd/server"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

// TestIdleStreamsSurvivePostgresStopPG: a session stream with no turn
// running (parked off its request) while Postgres stops and starts
// again stays open and follows the session's next turn. The hub's look
// at the log for turns begun elsewhere, failing while the server was
// down, woke every parked follower, whose own read failed too and ended
// its stream with no event at all: every idle stream of the process
// closed at once, for a restart of a second, and its clients came back
// together at a server just back.
func TestIdleStreamsSurvivePostgresStopPG(t *testing.T) {
	pg := pgtest.NewServer(t)
	e := mustChatEnvDepsOn(t, pg.NewDatabase(t), func(*server.Deps) {}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sess, err := e.alice.c.CreateSession(ctx, "", "plan")
	if err != nil {
		t.Fatal(err)
	}
	attached := make(chan struct{})
	followed := make(chan []client.Event, 1)
	go func() {
		evs, _ := e.followAttached(ctx, t, "/v1/sessions/"+sess.ID+"/stream", e.alice.key, "", "message_end", attached)
		followed <- evs
	}()
	<-attached
	// Parked: the session has no turn, the log says so.
	waitFor(t, func() bool { return e.api.DetachedStreams() == 1 })
	pg.Stop()
	// The hub looks at the parked session's log within a second.
	for !strings.Contains(e.logs.String(), "looking at an idle session's log") {
		select {
		case evs := <-followed:
			t.Fatalf("the idle stream ended while Postgres was down, with %d events\n%s", len(evs), e.logs.String())
		default:
			runtime.Gosched()
		}
	}
	pg.Start(t)
	e.fake.SetScript(func(*anthropictest.Request) anthropictest.Reply { return anthropictest.Text("Drive after five.", 6) })
	if s := e.chat(ctx, e.alice.key, "", `{"message":"when?","session_id":"`+sess.ID+`"}`); outcome(s) != "ok" {
		t.Fatalf("the turn after the restart: %s\n%s", outcome(s), s.raw)
	}
	evs := <-followed
	if got := textOf(evs); got != "Drive after five." {
		t.Errorf("the idle stream followed %q of the next turn (%d events), want its reply", got, len(evs))
	}
	e.mustNothingHeld(t)
}

package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

var lastEventID = regexp.MustCompile(`(?m)^id: (\d+:\d+)$`)

// TestSessionStreamAfterErroredTurn: a session stream (GET
// /v1/sessions/{id}/stream) follows turn after turn with one sse.Writer.
// A turn that ended in an error must not silence the next turns' endings:
// turn 2, which ends normally, shows its message_end. A review found it
// dropped, and the drain's notice then given turn 2's end's id.
func TestSessionStreamAfterErroredTurn(t *testing.T) {
	e, srv := mustParkEnv(t, time.Hour, (*httptest.Server).Start)
	ctx := context.Background()
	sess := e.MustSession(e.alice)
	// Turn 1: the upstream fails mid-reply.
	e.fake.Enqueue(anthropictest.Text("The first words, then", 4).ErrorAfter(2, "api_error", "boom"))
	if s := e.chat(ctx, e.alice.key, "", `{"message":"one","session_id":"`+sess.ID+`"}`); s.status != 200 || !strings.Contains(string(s.raw), "event: error") {
		t.Fatalf("turn 1: %d %s", s.status, s.raw)
	}
	// Turn 2: a plain reply.
	e.fake.Enqueue(anthropictest.Text("Second turn is fine.", 4))
	s2 := e.chat(ctx, e.alice.key, "", `{"message":"two","session_id":"`+sess.ID+`"}`)
	if s2.status != 200 || !strings.Contains(string(s2.raw), "event: message_end") {
		t.Fatalf("turn 2 on its own stream: %d %s", s2.status, s2.raw)
	}
	ids := lastEventID.FindAllStringSubmatch(string(s2.raw), -1)
	endID := ids[len(ids)-1][1]     // turn 2's message_end
	beforeEnd := ids[len(ids)-2][1] // the event before it (usage)

	// A client resumes the session from the start of turn 1.
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	rs := openRaw(t, hc, srv.URL+"/v1/sessions/"+sess.ID+"/stream", e.alice.key, "1:0")
	got := rs.until(t, "id: "+beforeEnd)
	waitFor(t, func() bool { return e.api.DetachedStreams() == 1 }) // idle: everything logged was sent
	e.api.Drain()
	got += rs.until(t, "server_shutdown")
	turn2 := got[strings.Index(got, "id: 2:1\n"):]
	if !strings.Contains(turn2, "event: message_end") {
		t.Errorf("the session stream never sent turn 2's message_end (%s) after turn 1's error:\n%s", endID, got)
	}
}

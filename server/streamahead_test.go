package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/client"
)

// TestStreamLastEventIDAhead: a Last-Event-ID past every event the session
// ever had (forged, or from another session) is refused with 400 rather
// than followed silently: a reader placed after ids never sent would skip
// every turn to come and wait forever.
func TestStreamLastEventIDAhead(t *testing.T) {
	e := MustChatEnv(t, nil)
	ctx := context.Background()
	sess := e.MustSession(e.alice)
	e.fake.Enqueue(anthropictest.Text("The first turn.", 3))
	if s := e.chat(ctx, e.alice.key, "", `{"message":"one","session_id":"`+sess.ID+`"}`); s.status != 200 {
		t.Fatal(s.status)
	}
	for _, id := range []string{"2:0", "7:3", "9223372036854775807:0"} {
		fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		got := make(chan int, 1)
		attached := make(chan struct{})
		var evs []client.Event
		go func() {
			var status int
			evs, status = e.followAttached(fctx, t, "/v1/sessions/"+sess.ID+"/stream", e.alice.key, id, "message_end", attached)
			got <- status
		}()
		<-attached
		status := 0
		select {
		case status = <-got:
		case <-fctx.Done():
		}
		cancel()
		if status != 400 {
			<-got
			t.Errorf("Last-Event-ID %s: status %d, events %v; want 400", id, status, evs)
		}
	}
	// Once pruning by age took every turn of the log, the last id the
	// client saw is still the session's: it is told it missed the rest
	// of turn 1 (events_missed), and follows the next turn.
	if _, err := e.db.PruneEvents(ctx, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	got := make(chan []client.Event, 1)
	attached := make(chan struct{})
	go func() {
		evs, _ := e.followAttached(ctx, t, "/v1/sessions/"+sess.ID+"/stream", e.alice.key, "1:2", "message_end", attached)
		got <- evs
	}()
	<-attached
	e.fake.Enqueue(anthropictest.Text("The second turn.", 3))
	if s := e.chat(ctx, e.alice.key, "", `{"message":"two","session_id":"`+sess.ID+`"}`); s.status != 200 {
		t.Fatal(s.status)
	}
	if evs := <-got; textOf(evs) != "The second turn." || len(evs) < 2 || evs[0].Name != "events_missed" || evs[1].ID != "2:1" {
		t.Errorf("after pruning, from 1:2: %v", evs)
	}
}

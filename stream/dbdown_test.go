package stream_test

import (
	"context"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

// TestFollowWhileDatabaseDownPG: a reader following from the log a turn
// that runs elsewhere (a reconnect with Last-Event-ID, a second
// replica's follower) when Postgres goes down gets a retryable
// unavailable error carrying the last event id it was sent, as its last
// event: it ended with no event at all, a plain EOF that says nothing of
// resuming or from where.
func TestFollowWhileDatabaseDownPG(t *testing.T) {
	pg := pgtest.NewServer(t)
	e := mustEnv(t, pg.NewDatabase(t))
	sid := e.session(t)
	turn := e.halfTurn(t, sid, "proc_elsewhere")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	got := make(chan coachd.Event, 16)
	done := make(chan error, 1)
	go func() {
		done <- e.a.Follow(ctx, e.user.ID, sid, coachd.EventID{Turn: turn}, 0, func(ev coachd.Event) error {
			got <- ev
			return nil
		})
	}()
	for ev := range got {
		if ev.Text == "Halfway" {
			break
		}
	}
	pg.Stop()
	err := <-done
	close(got)
	var last *coachd.Event
	for ev := range got {
		last = &ev
	}
	want := coachd.EventID{Turn: turn, Seq: 2}.String()
	if last == nil || last.Type != coachd.EventError || last.Err.Code != coachd.EUNAVAILABLE || !last.Err.Retryable ||
		last.Err.Extra["last_event_id"] != want || last.ID().String() != want {
		t.Fatalf("the reader's last event with the database down: %+v (Follow: %v), want a retryable unavailable error at %s", last, err, want)
	}
	if coachd.ErrorCode(err) != coachd.EUNAVAILABLE {
		t.Errorf("Follow returned %v, want the unavailable error", err)
	}
}

package stream_test

import (
	"context"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/internal/syncbuf"
	"github.com/coachd/coachd/sqlstore/pgtest"
	"github.com/coachd/coachd/stream"
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

// TestTurnEndWaitsForDatabasePG: a turn whose end (turn_ended, its last
// write to the log) meets Postgres down, back within the time the end
// has, is logged whole: a reader on another replica gets the turn's
// reply and its end. The write was tried once: the log never had the
// end, and the turn's readers got turn_interrupted once it showed no
// life for DeadAfter.
func TestTurnEndWaitsForDatabasePG(t *testing.T) {
	pg := pgtest.NewServer(t)
	e := mustEnv(t, pg.NewDatabase(t))
	logs := &syncbuf.Buffer{}
	h := stream.NewHub(e.db, slog.New(slog.NewTextHandler(logs, nil)))
	// Nothing but the turn's own writes reaches the log after the stop.
	h.FlushEvery, h.AliveEvery = time.Millisecond, time.Hour
	e.b.DeadAfter = 100 * time.Millisecond
	ctx := context.Background()
	sid := e.session(t)
	l, err := h.Begin(ctx, e.user.ID, sid)
	if err != nil {
		t.Fatal(err)
	}
	l.Send(coachd.Event{Seq: 1, Type: coachd.EventTurnStarted, SessionID: sid})
	l.Send(coachd.Event{Seq: 2, Type: coachd.EventTextDelta, Text: "Drive after five."})
	for {
		evs, err := e.db.Events(ctx, e.user.ID, sid, coachd.EventID{Turn: l.Turn()}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 2 {
			break
		}
	}
	pg.Stop()
	ended := make(chan struct{})
	go func() {
		l.Send(coachd.Event{Seq: 3, Type: coachd.EventTurnEnded, StopReason: "end_turn"})
		close(ended)
	}()
	for !strings.Contains(logs.String(), "event log") {
		runtime.Gosched() // the end's first write failed
	}
	pg.Start(t)
	<-ended
	got := collect(t, e.b, e.user.ID, sid, coachd.EventID{}, 0)
	if len(got) != 3 || got[1].Text != "Drive after five." || got[2].Type != coachd.EventTurnEnded || got[2].StopReason != "end_turn" {
		t.Fatalf("a reader on another replica got %+v, want the turn's reply and its end\n%s", got, logs.String())
	}
}

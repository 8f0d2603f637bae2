package stream_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore/pgtest"
	"github.com/coachd/coachd/stream"
)

// heldLook is the real store whose first LatestTurn, once it has read the
// log, waits for the test: what the reader decides from that look, the
// test knows it looked before the turn's process wrote again.
type heldLook struct {
	coachd.StreamService
	once   sync.Once
	looked chan struct{}
	resume chan struct{}
}

func (s *heldLook) LatestTurn(ctx context.Context, userID, sessionID string) (coachd.TurnLog, error) {
	tl, err := s.StreamService.LatestTurn(ctx, userID, sessionID)
	s.once.Do(func() {
		close(s.looked)
		<-s.resume
	})
	return tl, err
}

// TestTurnAliveAcrossRestartPG: Postgres restarts while a turn runs on
// another replica, down longer than DeadAfter; the turn's process, alive
// all along, could show no life while it was down and writes again once
// it is back. A reader that looked at the turn first, the database just
// back, gave it up (turn_interrupted), and its end was dropped from the
// log: silence was counted across the outage, when no turn could show
// life. It now counts from the database's start, and the reader gets the
// turn's reply and its end.
func TestTurnAliveAcrossRestartPG(t *testing.T) {
	pg := pgtest.NewServer(t)
	e := mustEnv(t, pg.NewDatabase(t))
	ctx := context.Background()
	const deadAfter = 3 * time.Second
	sid := e.session(t)
	turn := e.halfTurn(t, sid, "proc_elsewhere")
	// The turn's last sign of life, before the outage, is older than
	// DeadAfter once the database is back.
	for {
		tl, err := e.db.LatestTurn(ctx, e.user.ID, sid)
		if err != nil {
			t.Fatal(err)
		}
		if tl.Silent > deadAfter {
			break
		}
	}
	pg.Restart(t)

	store := &heldLook{StreamService: e.db, looked: make(chan struct{}), resume: make(chan struct{})}
	r := stream.NewHub(store, nil)
	r.FlushEvery, r.PollEvery, r.AliveEvery, r.DeadAfter = time.Millisecond, 2*time.Millisecond, 20*time.Millisecond, deadAfter
	fctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	got := make(chan coachd.Event, 16)
	go func() {
		r.Follow(fctx, e.user.ID, sid, coachd.EventID{}, turn, func(ev coachd.Event) error {
			got <- ev
			return nil
		})
		close(got)
	}()
	<-store.looked
	// The turn's process writes again, the database back; its end
	// once the reader has the rest of its reply.
	if _, err := e.db.AppendEvents(ctx, e.user.ID, sid, turn, []coachd.Event{
		{Turn: turn, Seq: 3, Type: coachd.EventTextDelta, Text: " and the rest."},
	}, false); err != nil {
		t.Fatal(err)
	}
	close(store.resume)
	var evs []coachd.Event
	for ev := range got {
		evs = append(evs, ev)
		if ev.Seq == 3 {
			if _, err := e.db.AppendEvents(ctx, e.user.ID, sid, turn, []coachd.Event{
				{Turn: turn, Seq: 4, Type: coachd.EventTurnEnded, StopReason: coachd.TurnEndTurn},
			}, true); err != nil {
				t.Fatal(err)
			}
		}
	}

	if n := len(evs); n != 4 || evs[2].Text != " and the rest." || evs[3].Type != coachd.EventTurnEnded || evs[3].StopReason != coachd.TurnEndTurn {
		t.Fatalf("the reader got %+v, want the turn's reply and its end", evs)
	}
}

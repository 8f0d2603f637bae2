package stream_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore"
	"github.com/coachd/coachd/stream"
)

// askedStore is a reader's hub's store that tells when the reader asks
// whether a turn is whole in the log.
type askedStore struct {
	*sqlstore.DB
	asked chan int64
}

func (s askedStore) TurnLogAt(ctx context.Context, userID, sessionID string, turn int64) (coachd.TurnLog, error) {
	select {
	case s.asked <- turn:
	default:
	}
	return s.DB.TurnLogAt(ctx, userID, sessionID, turn)
}

// TestFollowAcrossTurnBoundary: a turn gives up its session before its
// last events are logged, so the next turn may begin meanwhile. A reader
// resuming in the first turn then gets the rest of it, its end included,
// before any event of the next, whether the next runs in the reader's
// process (from memory) or elsewhere (from the log). A review found the
// reader going on to the next turn and never getting the first's end.
func TestFollowAcrossTurnBoundary(t *testing.T) {
	for _, where := range []string{"here", "elsewhere"} {
		t.Run(where, func(t *testing.T) {
			e := mustEnv(t, filepath.Join(t.TempDir(), "b.db"))
			ctx := context.Background()
			sid := e.session(t)
			text := func(turn, seq int64) coachd.Event {
				return coachd.Event{Seq: seq, Type: coachd.EventTextDelta, Text: fmt.Sprintf("t%d.%d ", turn, seq)}
			}
			ended := func(seq int64) coachd.Event {
				return coachd.Event{Seq: seq, Type: coachd.EventTurnEnded, StopReason: coachd.TurnEndTurn}
			}
			// The reader's replica, r. The turns run on host: r itself, or
			// another replica, whose events r reads from the log.
			asked := make(chan int64, 1)
			r := stream.NewHub(askedStore{e.db, asked}, nil)
			r.FlushEvery, r.PollEvery, r.AliveEvery, r.DeadAfter = e.a.FlushEvery, e.a.PollEvery, e.a.AliveEvery, e.a.DeadAfter
			host := r
			if where == "elsewhere" {
				host = e.a
			}
			// Turn 1 has sent three events, not its end; turn 2 begins and
			// sends two (elsewhere, it ends too: its events are in the log
			// after turn 1's, which lacks its last).
			l1, err := host.Begin(ctx, e.user.ID, sid)
			if err != nil {
				t.Fatal(err)
			}
			for seq := int64(1); seq <= 3; seq++ {
				l1.Send(text(1, seq))
			}
			l2, err := host.Begin(ctx, e.user.ID, sid)
			if err != nil || l2.Turn() != 2 {
				t.Fatalf("turn 2: %v %v", l2, err)
			}
			l2.Send(text(2, 1))
			l2.Send(text(2, 2))
			if where == "elsewhere" {
				l2.Send(ended(3)) // logged before Send returns
			}

			// The reader resumes after 1:1.
			var mu sync.Mutex
			var got []coachd.Event
			early := make(chan coachd.EventID, 1)
			fctx, cancel := context.WithCancel(ctx)
			defer cancel()
			followed := make(chan error, 1)
			go func() {
				end1 := false
				followed <- r.Follow(fctx, e.user.ID, sid, coachd.EventID{Turn: 1, Seq: 1}, 0, func(ev coachd.Event) error {
					mu.Lock()
					got = append(got, ev)
					mu.Unlock()
					if ev.Turn == 1 && ev.Terminal() {
						end1 = true
					}
					if ev.Turn == 2 && !end1 {
						select {
						case early <- ev.ID():
						default:
						}
					}
					if ev.Turn == 2 && ev.Terminal() {
						cancel()
					}
					return nil
				})
			}()
			select {
			case turn := <-asked:
				if turn != 1 {
					t.Fatalf("the reader asked about turn %d, want 1", turn)
				}
			case id := <-early:
				t.Fatalf("the reader sent %s before turn 1's end", id)
			}
			// Turn 1 ends: the reader gets the rest of it, then turn 2.
			l1.Send(text(1, 4))
			l1.Send(ended(5))
			if where == "here" {
				l2.Send(ended(3))
			}
			<-followed
			mu.Lock()
			defer mu.Unlock()
			var ids []string
			for _, ev := range got {
				ids = append(ids, ev.ID().String())
			}
			if want := "[1:2 1:3 1:4 1:5 2:1 2:2 2:3]"; fmt.Sprint(ids) != want {
				t.Errorf("resumed after 1:1 the reader got %v, want %s", ids, want)
			}
		})
	}
}

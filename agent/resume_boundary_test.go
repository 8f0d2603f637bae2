package agent_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/sqlstore"
	"github.com/coachd/coachd/stream"
)

// endGate is a turn's event sink (its stream.Live) that holds the turn's
// turn_ended until release: the moment between Turn.end (stored, settled,
// the session released) and the Live logging the turn's last events.
type endGate struct {
	*stream.Live
	reached, release chan struct{}
}

func newEndGate(l *stream.Live) *endGate {
	return &endGate{Live: l, reached: make(chan struct{}), release: make(chan struct{})}
}

func (g *endGate) Send(ev coachd.Event) error {
	if ev.Type == coachd.EventTurnEnded {
		close(g.reached)
		<-g.release
	}
	return g.Live.Send(ev)
}

// askedStore tells when a reader asks whether a turn is whole in the log.
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

// TestResumeAcrossTurnBoundary: a client of turn 1 that reconnects with
// Last-Event-ID while turn 1 is finishing (its session already free, so
// the next turn, an on_busy=wait request or another tab, has begun here)
// gets the rest of turn 1, its end included, before turn 2. A review
// found the reader going on to turn 2 with none of turn 1's rest.
func TestResumeAcrossTurnBoundary(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	ctx := context.Background()
	asked := make(chan int64, 1)
	hub := stream.NewHub(askedStore{h.store, asked}, nil)
	h.fake.Enqueue(anthropictest.Text("first reply", 4), anthropictest.Text("second reply", 4))

	tr1, err := h.runner.Prepare(ctx, agent.TurnRequest{User: h.user, Message: "one", Stream: hub.Start()})
	if err != nil {
		t.Fatal(err)
	}
	sid, n1 := tr1.SessionID(), tr1.StreamTurn()
	gate1 := newEndGate(hub.BeginAt(h.user.ID, sid, n1))
	done1 := make(chan *agent.Result, 1)
	go func() { done1 <- tr1.Run(ctx, gate1) }()
	<-gate1.reached

	// The session is free: the next turn begins, and runs to its end.
	tr2, err := h.runner.Prepare(ctx, agent.TurnRequest{User: h.user, SessionID: sid, Message: "two", Stream: hub.Start()})
	if err != nil {
		t.Fatalf("turn 2: %v", err)
	}
	n2 := tr2.StreamTurn()
	gate2 := newEndGate(hub.BeginAt(h.user.ID, sid, n2))
	done2 := make(chan *agent.Result, 1)
	go func() { done2 <- tr2.Run(ctx, gate2) }()
	<-gate2.reached

	// Turn 1's client reconnects after its first event.
	var mu sync.Mutex
	var got []coachd.Event
	early := make(chan coachd.EventID, 1)
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	followed := make(chan error, 1)
	go func() {
		end1 := false
		followed <- hub.Follow(fctx, h.user.ID, sid, coachd.EventID{Turn: n1, Seq: 1}, 0, func(ev coachd.Event) error {
			mu.Lock()
			got = append(got, ev)
			mu.Unlock()
			end1 = end1 || ev.Turn == n1 && ev.Terminal()
			if ev.Turn == n2 && !end1 {
				select {
				case early <- ev.ID():
				default:
				}
			}
			if ev.Turn == n2 && ev.Terminal() {
				cancel()
			}
			return nil
		})
	}()
	select {
	case turn := <-asked:
		if turn != n1 {
			t.Fatalf("the reader asked about turn %d, want %d", turn, n1)
		}
	case id := <-early:
		t.Fatalf("resumed at %d:1, the reader sent %s before turn %d's end", n1, id, n1)
	}
	close(gate1.release)
	close(gate2.release)
	for _, done := range []chan *agent.Result{done1, done2} {
		if res := <-done; res.StopReason != coachd.TurnEndTurn {
			t.Fatalf("%s %v", res.StopReason, res.Err)
		}
	}
	<-followed

	mu.Lock()
	defer mu.Unlock()
	var ids []string
	turns := ""
	for _, ev := range got {
		ids = append(ids, ev.ID().String()+" "+string(ev.Type))
		if ev.Terminal() {
			turns += fmt.Sprint(ev.Turn, " ")
		}
	}
	if turns != fmt.Sprint(n1, " ", n2, " ") || got[0].ID() != (coachd.EventID{Turn: n1, Seq: 2}) {
		t.Errorf("resumed at %d:1, the reader got %v, want the rest of turn %d to its end, then turn %d", n1, ids, n1, n2)
	}
}

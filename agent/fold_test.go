package agent_test

import (
	"context"
	"sync"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// The event log keeps the session's last Keep turns; the retention runs
// at the turn's end (EndTurn), not in its admission on the way to the
// first text: admitted, a session holds one turn more, and its end
// brings it back to Keep.
func TestLogRetentionAtTurnEnd(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	ctx := context.Background()
	logged := func(sid string) (n, first int64) {
		t.Helper()
		if err := h.store.SQL().QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(MIN(turn), 0) FROM turns WHERE session_id = ?`, sid).
			Scan(&n, &first); err != nil {
			t.Fatal(err)
		}
		return n, first
	}
	const keep = 2
	sid := ""
	for i := 1; i <= 4; i++ {
		h.fake.Enqueue(anthropictest.Text("Fine.", 2))
		tr, err := h.runner.Prepare(ctx, agent.TurnRequest{User: h.user, SessionID: sid, Message: "hi",
			Stream: &coachd.StreamStart{Owner: "proc_test", Keep: keep}})
		if err != nil {
			t.Fatal(err)
		}
		if got := tr.StreamTurn(); got != int64(i) {
			t.Fatalf("turn %d logged as %d", i, got)
		}
		sid = tr.SessionID()
		if n, first := logged(sid); n != int64(min(i, keep+1)) || first != int64(max(1, i-keep)) {
			t.Fatalf("turn %d admitted: %d logged turns from %d", i, n, first)
		}
		if res := tr.Run(ctx, &sink{}); res.StopReason != coachd.TurnEndTurn {
			t.Fatalf("turn %d: %s %v", i, res.StopReason, res.Err)
		}
		if n, first := logged(sid); n != int64(min(i, keep)) || first != int64(max(1, i-keep+1)) {
			t.Fatalf("turn %d ended: %d logged turns from %d", i, n, first)
		}
	}
}

// roundSink records, at the first text delta of the reply after a tool
// round, what the store holds: the round's messages and its charge.
type roundSink struct {
	sink
	h        *harness
	once     sync.Once
	messages []*coachd.Message
	charges  []coachd.LedgerEntry
}

func (s *roundSink) Send(ev coachd.Event) error {
	if ev.Type == coachd.EventTextDelta {
		s.once.Do(func() {
			ctx := context.Background()
			rows, _ := s.h.store.Ledger(ctx, s.h.user.ID)
			for _, r := range rows {
				if r.Reason == "charge" {
					s.charges = append(s.charges, r)
				}
			}
			sessions, _, _ := s.h.store.ListSessions(ctx, s.h.user.ID, coachd.Page{})
			if len(sessions) == 1 {
				s.messages = s.h.history(sessions[0].ID)
			}
		})
	}
	return s.sink.Send(ev)
}

// A tool round is stored with its charge, in one transaction (the round's),
// before any text of the next reply goes out: the ledger then holds the
// round's usage as a charge, and the turn's end finalizes the rest.
func TestRoundChargedWithRound(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	h.fake.Enqueue(
		anthropictest.Blocks(use("tu_1", "echo", `{"x":1}`)).WithUsage(usage(100, 10)),
		anthropictest.Text("Done, here it is.", 3).WithUsage(usage(130, 20)),
	)
	s := &roundSink{h: h}
	tr, err := h.runner.Prepare(context.Background(), agent.TurnRequest{User: h.user, Message: "go"})
	if err != nil {
		t.Fatal(err)
	}
	res := tr.Run(context.Background(), s)
	if res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("%s: %v", res.StopReason, res.Err)
	}
	if len(s.messages) != 3 || len(s.charges) != 1 || s.charges[0].Used != 110 {
		t.Fatalf("at the reply's first text: %d messages, charges %+v; want the round (3 messages) and its 110 tokens", len(s.messages), s.charges)
	}
	// One transaction reads the clock once: the round's rows and its
	// charge carry the same time, the user message's write another.
	if at := s.charges[0].CreatedAt; !s.messages[1].CreatedAt.Equal(at) || !s.messages[2].CreatedAt.Equal(at) || s.messages[0].CreatedAt.Equal(at) {
		t.Fatalf("charge at %v, messages at %v, %v, %v: the round and its charge were not one write",
			at, s.messages[0].CreatedAt, s.messages[1].CreatedAt, s.messages[2].CreatedAt)
	}
	h.mustSettled(res, coachd.ReservationFinalized)
}

package agent_test

import (
	"context"
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
		sid = tr.Session().ID
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

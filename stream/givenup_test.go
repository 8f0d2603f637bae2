package stream_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

// TestGivenUpTurnComesBack: a turn given up by its readers (no sign of
// life for DeadAfter) whose process was only stalled, and comes back
// logging more of it, still ends once: its readers got its interrupted
// ending, and a session's follower goes on to the next turn, never to
// text and a second end of the turn it was told had ended.
func TestGivenUpTurnComesBack(t *testing.T) {
	onBothStores(t, func(t *testing.T, e *env) {
		e.b.DeadAfter = 50 * time.Millisecond
		ctx := context.Background()
		sid := e.session(t)
		turn := e.halfTurn(t, sid, "proc_stalled")
		got := collect(t, e.b, e.user.ID, sid, coachd.EventID{}, 0)
		end := got[len(got)-1]
		if len(got) != 4 || end.Type != coachd.EventTurnEnded {
			t.Fatalf("given up: %+v", got)
		}
		// The stalled process comes back: the rest of its turn.
		if _, err := e.db.AppendEvents(ctx, e.user.ID, sid, turn, []coachd.Event{
			{Turn: turn, Seq: 3, Type: coachd.EventTextDelta, Text: " and"},
			{Turn: turn, Seq: 4, Type: coachd.EventTextDelta, Text: " the rest,"},
			{Turn: turn, Seq: 5, Type: coachd.EventTextDelta, Text: " too late"},
			{Turn: turn, Seq: 6, Type: coachd.EventTurnEnded, StopReason: coachd.TurnEndTurn},
		}, true); err != nil {
			t.Fatal(err)
		}
		next, err := e.db.BeginTurn(ctx, e.user.ID, sid, "proc_next", 20)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.db.AppendEvents(ctx, e.user.ID, sid, next, []coachd.Event{
			{Turn: next, Seq: 1, Type: coachd.EventTurnStarted, SessionID: sid},
			{Turn: next, Seq: 2, Type: coachd.EventTurnEnded, StopReason: coachd.TurnEndTurn},
		}, true); err != nil {
			t.Fatal(err)
		}
		for _, h := range []string{"a", "b"} {
			hub := e.a
			if h == "b" {
				hub = e.b
			}
			after := collect(t, hub, e.user.ID, sid, end.ID(), 0)
			if len(after) == 0 || after[0].Turn != next {
				t.Errorf("hub %s: after the end %s of turn %d: %+v", h, end.ID(), turn, after)
			}
		}
	})
}

// onBothStores runs f as a subtest on a fresh env over SQLite and over
// Postgres.
func onBothStores(t *testing.T, f func(t *testing.T, e *env)) {
	for name, dsn := range map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return filepath.Join(t.TempDir(), "c.db") },
		"postgres": func(t *testing.T) string { return pgtest.NewDatabase(t) },
	} {
		t.Run(name, func(t *testing.T) { f(t, mustEnv(t, dsn(t))) })
	}
}

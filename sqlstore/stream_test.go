package sqlstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

// TestStreamLog: turn numbers, ordering after an id, retention by turns
// and by age, stop requests and stream tokens, scoped to the user, on
// both dialects.
func TestStreamLog(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			clock := newClock()
			db := MustOpen(t, b.newDSN(t), clock)
			alice, bob := MustCreateUser(t, db, "alice"), MustCreateUser(t, db, "bob")
			sess := MustCreateSession(t, db, alice.ID)
			if _, err := db.BeginTurn(ctx, bob.ID, sess.ID, "p", 3); coachd.ErrorCode(err) != coachd.ENOTFOUND {
				t.Fatalf("bob begins a turn in alice's session: %v", err)
			}
			for want := int64(1); want <= 5; want++ {
				turn, err := db.BeginTurn(ctx, alice.ID, sess.ID, "p", 3)
				if err != nil || turn != want {
					t.Fatalf("turn %d, %v; want %d", turn, err, want)
				}
				evs := []coachd.Event{
					{Turn: turn, Seq: 1, Type: coachd.EventTextDelta, Text: "a"},
					{Turn: turn, Seq: 2, Type: coachd.EventError, Err: &coachd.Error{Code: "x", Message: "m", Retryable: true, RetryAfter: 2 * time.Second}},
				}
				if stop, err := db.AppendEvents(ctx, alice.ID, sess.ID, turn, evs, want < 5); err != nil || stop {
					t.Fatal(stop, err)
				}
			}
			// Three turns kept: 3, 4, 5.
			evs, err := db.Events(ctx, alice.ID, sess.ID, coachd.EventID{}, 100)
			if err != nil || len(evs) != 6 || evs[0].ID() != (coachd.EventID{Turn: 3, Seq: 1}) {
				t.Fatalf("events: %d %v %+v", len(evs), err, evs)
			}
			if e := evs[1].Err; e == nil || e.Code != "x" || !e.Retryable || e.RetryAfter != 2*time.Second {
				t.Errorf("the error did not survive the log: %+v", e)
			}
			evs, _ = db.Events(ctx, alice.ID, sess.ID, coachd.EventID{Turn: 4, Seq: 1}, 2)
			if len(evs) != 2 || evs[0].ID() != (coachd.EventID{Turn: 4, Seq: 2}) || evs[1].ID() != (coachd.EventID{Turn: 5, Seq: 1}) {
				t.Errorf("after 4:1: %+v", evs)
			}
			if evs, _ := db.Events(ctx, bob.ID, sess.ID, coachd.EventID{}, 100); len(evs) != 0 {
				t.Errorf("bob read %d of alice's events", len(evs))
			}
			tl, err := db.LatestTurn(ctx, alice.ID, sess.ID)
			if err != nil || tl.Turn != 5 || tl.Ended || tl.Owner != "p" {
				t.Fatalf("latest: %+v %v", tl, err)
			}
			if err := db.RequestStop(ctx, bob.ID, sess.ID); coachd.ErrorCode(err) != coachd.ENOTFOUND {
				t.Errorf("bob stops alice's turn: %v", err)
			}
			if err := db.RequestStop(ctx, alice.ID, sess.ID); err != nil {
				t.Fatal(err)
			}
			if stop, err := db.AppendEvents(ctx, alice.ID, sess.ID, 5, nil, true); err != nil || !stop {
				t.Errorf("the running turn did not learn of the stop: %v %v", stop, err)
			}
			if err := db.RequestStop(ctx, alice.ID, sess.ID); coachd.ErrorCode(err) != coachd.ENOTFOUND {
				t.Errorf("stop with the turn ended: %v", err)
			}
			// Tokens: for one session, until they expire.
			if err := db.CreateStreamToken(ctx, bob.ID, sess.ID, "h0", clock.Now().Add(time.Minute)); coachd.ErrorCode(err) != coachd.ENOTFOUND {
				t.Errorf("bob mints for alice's session: %v", err)
			}
			if err := db.CreateStreamToken(ctx, alice.ID, sess.ID, "h1", clock.Now().Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			if u, err := db.StreamTokenUser(ctx, "h1", sess.ID); err != nil || u.ID != alice.ID {
				t.Errorf("token user: %v %v", u, err)
			}
			other := MustCreateSession(t, db, alice.ID)
			if _, err := db.StreamTokenUser(ctx, "h1", other.ID); coachd.ErrorCode(err) != coachd.EUNAUTHORIZED {
				t.Errorf("token on another session: %v", err)
			}
			clock.Add(2 * time.Minute)
			if _, err := db.StreamTokenUser(ctx, "h1", sess.ID); coachd.ErrorCode(err) != coachd.EUNAUTHORIZED {
				t.Errorf("expired token: %v", err)
			}
			// Retention by age.
			n, err := db.PruneEvents(ctx, clock.Now())
			if err != nil || n != 3 {
				t.Errorf("pruned %d, %v; want 3", n, err)
			}
			if evs, _ := db.Events(ctx, alice.ID, sess.ID, coachd.EventID{}, 100); len(evs) != 0 {
				t.Errorf("%d events after pruning", len(evs))
			}
		})
	}
}

// TestAppendEventsBatches: a batch longer than one INSERT takes (200
// rows) is stored whole, each event under its own seq, on both dialects.
func TestAppendEventsBatches(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db := MustOpen(t, b.newDSN(t), newClock())
			alice := MustCreateUser(t, db, "alice")
			sess := MustCreateSession(t, db, alice.ID)
			turn, err := db.BeginTurn(ctx, alice.ID, sess.ID, "p", 3)
			if err != nil {
				t.Fatal(err)
			}
			const n = 450
			evs := make([]coachd.Event, n)
			for i := range evs {
				evs[i] = coachd.Event{Turn: turn, Seq: int64(i + 1), Type: coachd.EventTextDelta, Text: fmt.Sprintf("delta %d", i+1)}
			}
			evs[300] = coachd.Event{Turn: turn, Seq: 301, Type: coachd.EventToolCallStarted, ToolUseID: "toolu_1", ToolName: "save_note"}
			if _, err := db.AppendEvents(ctx, alice.ID, sess.ID, turn, evs, true); err != nil {
				t.Fatal(err)
			}
			got, err := db.Events(ctx, alice.ID, sess.ID, coachd.EventID{}, 1000)
			if err != nil || len(got) != n {
				t.Fatalf("%d events (%v), want %d", len(got), err, n)
			}
			for i, ev := range got {
				w := evs[i]
				if ev.Seq != w.Seq || ev.Type != w.Type || ev.Text != w.Text || ev.ToolUseID != w.ToolUseID {
					t.Fatalf("event %d: %+v, want %+v", i, ev, w)
				}
			}
		})
	}
}

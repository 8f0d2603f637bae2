package sqlstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore/pgtest"
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
			if tl, err := db.TurnLogAt(ctx, alice.ID, sess.ID, 4); err != nil || tl.Turn != 4 || !tl.Ended || tl.Owner != "p" {
				t.Errorf("turn 4: %+v %v", tl, err)
			}
			if tl, err := db.TurnLogAt(ctx, alice.ID, sess.ID, 1); err != nil || tl.Turn != 0 {
				t.Errorf("turn 1, pruned: %+v %v", tl, err)
			}
			if _, err := db.TurnLogAt(ctx, bob.ID, sess.ID, 4); coachd.ErrorCode(err) != coachd.ENOTFOUND {
				t.Errorf("bob reads alice's turn: %v", err)
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
			if db.Dialect() == "postgres" {
				// Timed by the database's clock there (TestStreamTokenClockPG).
				if err := rawExec(t, db, `UPDATE stream_tokens SET expires_at = expires_at - interval '2 minutes'`); err != nil {
					t.Fatal(err)
				}
			}
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

// TestEventBatches: a flush's events are one row of the log, on both
// dialects. Read back, every event comes once and in order: from a cursor
// in the middle of a batch, in pages smaller than a batch, across turns,
// and when a flush was retried after its write landed (a second row
// repeating the first's events).
func TestEventBatches(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db := MustOpen(t, b.newDSN(t), newClock())
			alice := MustCreateUser(t, db, "alice")
			sess := MustCreateSession(t, db, alice.ID)
			events := func(turn int64, from, to int) []coachd.Event {
				evs := make([]coachd.Event, 0, to-from+1)
				for i := from; i <= to; i++ {
					evs = append(evs, coachd.Event{Turn: turn, Seq: int64(i), Type: coachd.EventTextDelta, Text: fmt.Sprintf("delta %d", i)})
				}
				return evs
			}
			appendEvs := func(turn int64, evs []coachd.Event, ended bool) {
				t.Helper()
				if _, err := db.AppendEvents(ctx, alice.ID, sess.ID, turn, evs, ended); err != nil {
					t.Fatal(err)
				}
			}
			t1, err := db.BeginTurn(ctx, alice.ID, sess.ID, "p", 3)
			if err != nil {
				t.Fatal(err)
			}
			big := events(t1, 1, 450)
			big[300] = coachd.Event{Turn: t1, Seq: 301, Type: coachd.EventToolCallStarted, ToolUseID: "toolu_1", ToolName: "save_note"}
			appendEvs(t1, big[:10], false)
			appendEvs(t1, big[:400], false) // the retry of a flush that landed
			appendEvs(t1, big[400:], false)
			appendEvs(t1, big[400:], true) // the same batch again
			t2, err := db.BeginTurn(ctx, alice.ID, sess.ID, "p", 3)
			if err != nil {
				t.Fatal(err)
			}
			appendEvs(t2, events(t2, 1, 5), true)
			want := append(append([]coachd.Event(nil), big...), events(t2, 1, 5)...)

			var rows int
			if err := db.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM turn_events`).Scan(&rows); err != nil {
				t.Fatal(err)
			}
			if rows != 4 {
				t.Errorf("%d rows logged for 5 batches, one a repeat: want 4", rows)
			}
			check := func(got []coachd.Event, want []coachd.Event) {
				t.Helper()
				if len(got) != len(want) {
					t.Fatalf("%d events, want %d", len(got), len(want))
				}
				for i, ev := range got {
					w := want[i]
					if ev.Turn != w.Turn || ev.Seq != w.Seq || ev.Type != w.Type || ev.Text != w.Text || ev.ToolUseID != w.ToolUseID {
						t.Fatalf("event %d: %+v, want %+v", i, ev, w)
					}
				}
			}
			got, err := db.Events(ctx, alice.ID, sess.ID, coachd.EventID{}, 1000)
			if err != nil {
				t.Fatal(err)
			}
			check(got, want)
			// In pages of 64, each from the last event of the one before.
			var paged []coachd.Event
			for cur := (coachd.EventID{}); ; {
				page, err := db.Events(ctx, alice.ID, sess.ID, cur, 64)
				if err != nil {
					t.Fatal(err)
				}
				paged = append(paged, page...)
				if len(page) < 64 {
					break
				}
				last := page[len(page)-1]
				cur = coachd.EventID{Turn: last.Turn, Seq: last.Seq}
			}
			check(paged, want)
			// From the middle of a batch, and from the end of a turn.
			got, err = db.Events(ctx, alice.ID, sess.ID, coachd.EventID{Turn: t1, Seq: 5}, 3)
			if err != nil {
				t.Fatal(err)
			}
			check(got, want[5:8])
			got, err = db.Events(ctx, alice.ID, sess.ID, coachd.EventID{Turn: t1, Seq: 450}, 10)
			if err != nil {
				t.Fatal(err)
			}
			check(got, want[450:])
			// Another user reads nothing of it.
			bob := MustCreateUser(t, db, "bob")
			if got, err := db.Events(ctx, bob.ID, sess.ID, coachd.EventID{}, 10); err != nil || len(got) != 0 {
				t.Errorf("bob read %d events (%v)", len(got), err)
			}
		})
	}
}

// TestPruneEventsTurnEndsMeanwhile: on Postgres PruneEvents' two
// statements (keep each pruned session's last turn number, then delete the
// aged turns) see different snapshots. A session's only turn, running
// when the first looks and ended before the second, was deleted without
// its number kept: the session's next turn got the same number again, and
// a client resuming from its last event id skipped the new turn's events.
func TestPruneEventsTurnEndsMeanwhile(t *testing.T) {
	ctx := context.Background()
	clock := newClock()
	db := MustOpen(t, pgtest.NewDatabase(t), clock)
	u := MustCreateUser(t, db, "a")
	a, b := MustCreateSession(t, db, u.ID), MustCreateSession(t, db, u.ID)
	start := clock.Now()
	for _, s := range []*coachd.Session{a, b} {
		if turn, err := db.BeginTurn(ctx, u.ID, s.ID, "p", 0); err != nil || turn != 1 {
			t.Fatalf("turn %d, %v", turn, err)
		}
	}
	// b's turn ends; a's runs on, alive past the cut.
	if _, err := db.AppendEvents(ctx, u.ID, b.ID, 1, []coachd.Event{{Seq: 1, Type: coachd.EventTextDelta, Text: "b"}}, true); err != nil {
		t.Fatal(err)
	}
	clock.Add(2 * time.Hour)
	if _, err := db.AppendEvents(ctx, u.ID, a.ID, 1, []coachd.Event{{Seq: 1, Type: coachd.EventTextDelta, Text: "a"}}, false); err != nil {
		t.Fatal(err)
	}
	// Another transaction holds b's session row (so the prune's first
	// statement waits for it) and ends a's turn, then commits.
	other, err := db.SQL().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Rollback()
	if _, err := other.ExecContext(ctx, `UPDATE sessions SET title = title WHERE id = $1`, b.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := other.ExecContext(ctx, `UPDATE turns SET ended = TRUE WHERE session_id = $1`, a.ID); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := db.PruneEvents(ctx, start.Add(time.Hour))
		done <- err
	}()
	// Until the prune waits for the other transaction's lock.
	for {
		var waiting int
		if err := db.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the prune did not wait for the lock: %v", err)
		default:
		}
	}
	if err := other.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if turn, err := db.BeginTurn(ctx, u.ID, a.ID, "p", 0); err != nil || turn != 2 {
		t.Fatalf("a's next turn is %d (%v), want 2: a number given twice", turn, err)
	}
}

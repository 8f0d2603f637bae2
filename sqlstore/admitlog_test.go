package sqlstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

// TestAdmitTurnLogAndMessage: an admission that begins the event log's
// turn and stores the user message (one statement with the lease on
// Postgres) numbers the turn after the session's last, stores the
// message at the next seq, applies the log's retention, and writes
// neither when it is refused after them.
func TestAdmitTurnLogAndMessage(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db, clock, u, s := budgetSession(t, b, 1000)
			until := clock.Now().Add(time.Minute)

			// admit admits a turn with its message, logs one event in its
			// turn and ends it with a reply; it returns the turn's number.
			admit := func(text string) int64 {
				t.Helper()
				seen, err := db.FindSession(ctx, u.ID, s.ID)
				if err != nil {
					t.Fatal(err)
				}
				a := admission(seen, "A", until, 100)
				a.Stream = &coachd.StreamStart{Owner: "proc", Keep: 2}
				a.Message = &coachd.Message{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock(text)}}
				adm, err := db.AdmitTurn(ctx, a)
				if err != nil {
					t.Fatal(err)
				}
				if want := seen.MessageCount + 1; a.Message.Seq != want || a.Message.ID == "" || a.Message.SessionID != s.ID {
					t.Fatalf("%s: the message as admitted %+v, want seq %d", text, a.Message, want)
				}
				ev := coachd.Event{Type: coachd.EventTextDelta, Seq: 1, Text: text}
				if _, err := db.AppendEvents(ctx, u.ID, s.ID, adm.StreamTurn, []coachd.Event{ev}, false); err != nil {
					t.Fatal(err)
				}
				reply := &coachd.Message{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("re: " + text)}}
				if _, _, err := db.EndTurn(ctx, u.ID, coachd.TurnEnd{SessionID: s.ID, Messages: []*coachd.Message{reply},
					ReservationID: adm.Reservation.ID, Spend: coachd.Spend{Amount: 10, Tokens: 10}, Mode: coachd.SettleFinalize, Owner: "A"}); err != nil {
					t.Fatal(err)
				}
				return adm.StreamTurn
			}
			for i, text := range []string{"one", "two", "three"} {
				if turn := admit(text); turn != int64(i+1) {
					t.Fatalf("turn %d numbered %d", i+1, turn)
				}
			}
			msgs, err := db.History(ctx, u.ID, s.ID)
			if err != nil || len(msgs) != 6 {
				t.Fatalf("%d messages (%v), want 6", len(msgs), err)
			}
			for i, m := range msgs {
				if m.Seq != int64(i+1) {
					t.Fatalf("message %d at seq %d", i, m.Seq)
				}
			}
			if got := coachd.BlocksText(msgs[4].Blocks); got != "three" || msgs[4].Role != coachd.RoleUser {
				t.Fatalf("the third turn's message is %s %q", msgs[4].Role, got)
			}
			// Keep 2: the third turn's admission pruned the first's events.
			evs, err := db.Events(ctx, u.ID, s.ID, coachd.EventID{}, 10)
			if err != nil || len(evs) != 2 || evs[0].Turn != 2 || evs[1].Text != "three" {
				t.Fatalf("events after retention: %+v (%v), want turns 2 and 3", evs, err)
			}

			// Refused after the lease's statement (the budget): no turn
			// logged, no message stored, the lease free.
			seen, _ := db.FindSession(ctx, u.ID, s.ID)
			a := admission(seen, "B", until, 5000)
			a.Stream = &coachd.StreamStart{Owner: "proc", Keep: 2}
			a.Message = &coachd.Message{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("too dear")}}
			if _, err := db.AdmitTurn(ctx, a); coachd.ErrorCode(err) != coachd.EBUDGET {
				t.Fatalf("over budget: %v", err)
			}
			// Refused by the lease's own row (read with another title).
			retitled := *seen
			retitled.Title = "not what is stored"
			a = admission(&retitled, "B", until, 100)
			a.Stream = &coachd.StreamStart{Owner: "proc", Keep: 2}
			a.Message = &coachd.Message{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("retitled")}}
			if _, err := db.AdmitTurn(ctx, a); !errors.Is(err, coachd.ErrSessionChanged) {
				t.Fatalf("stale read admitted: %v", err)
			}
			if tl, err := db.LatestTurn(ctx, u.ID, s.ID); err != nil || tl.Turn != 3 {
				t.Fatalf("refused admissions logged turn %d (%v)", tl.Turn, err)
			}
			if got, _ := db.FindSession(ctx, u.ID, s.ID); got.MessageCount != 6 {
				t.Fatalf("refused admissions stored messages: %d, want 6", got.MessageCount)
			}
			if msgs, _ := db.History(ctx, u.ID, s.ID); len(msgs) != 6 {
				t.Fatalf("refused admissions stored messages: %d in the history, want 6", len(msgs))
			}
			if err := db.AcquireTurn(ctx, u.ID, s.ID, "C", until); err != nil {
				t.Fatalf("a refused admission kept the lease: %v", err)
			}
			MustLedgerOK(t, db)
		})
	}
}

// TestTurnNumbersAfterPruning: a session's turns are numbered after every
// turn it had, even when the log's pruning by age deleted them all (a
// session idle past the retention): an event's id (turn:seq) is never
// given twice, and a client resuming from the last it saw gets the new
// turn's events. Both ways a turn is logged: its admission (one statement
// with the lease on Postgres) and BeginTurn. Before the session kept the
// pruned turns' number, the next turn was numbered 1 again and Events
// after the client's last id returned nothing.
func TestTurnNumbersAfterPruning(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db, clock, u, s := budgetSession(t, b, 100000)
			admitted := func() int64 {
				t.Helper()
				seen, err := db.FindSession(ctx, u.ID, s.ID)
				if err != nil {
					t.Fatal(err)
				}
				a := admission(seen, "A", clock.Now().Add(time.Minute), 100)
				a.Stream = &coachd.StreamStart{Owner: "proc"}
				a.Message = &coachd.Message{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("hi")}}
				adm, err := db.AdmitTurn(ctx, a)
				if err != nil {
					t.Fatal(err)
				}
				if _, _, err := db.EndTurn(ctx, u.ID, coachd.TurnEnd{SessionID: s.ID, ReservationID: adm.Reservation.ID,
					Mode: coachd.SettleFinalize, Owner: "A"}); err != nil {
					t.Fatal(err)
				}
				return adm.StreamTurn
			}
			begun := func() int64 {
				t.Helper()
				turn, err := db.BeginTurn(ctx, u.ID, s.ID, "proc", 0)
				if err != nil {
					t.Fatal(err)
				}
				return turn
			}
			var last coachd.EventID
			for i, begin := range []func() int64{admitted, begun, admitted, begun, admitted} {
				turn := begin()
				if turn <= last.Turn {
					t.Fatalf("turn %d numbered %d after turn %d", i+1, turn, last.Turn)
				}
				ev := coachd.Event{Turn: turn, Seq: 1, Type: coachd.EventTextDelta, Text: "x"}
				if _, err := db.AppendEvents(ctx, u.ID, s.ID, turn, []coachd.Event{ev}, true); err != nil {
					t.Fatal(err)
				}
				if evs, err := db.Events(ctx, u.ID, s.ID, last, 10); err != nil || len(evs) != 1 || evs[0].ID() != ev.ID() {
					t.Fatalf("events after %v: %+v (%v), want turn %d's", last, evs, err, turn)
				}
				last = ev.ID()
				if i%2 == 1 {
					// Idle past the retention: every turn of the session goes.
					clock.Add(48 * time.Hour)
					if n, err := db.PruneEvents(ctx, clock.Now().Add(-24*time.Hour)); err != nil || n == 0 {
						t.Fatalf("pruned %d turns (%v)", n, err)
					}
					// The log is empty; its latest turn is the last pruned, ended.
					if tl, err := db.LatestTurn(ctx, u.ID, s.ID); err != nil || tl.Turn != turn || !tl.Ended || tl.Owner != "" {
						t.Fatalf("latest turn after pruning: %+v (%v)", tl, err)
					}
				}
			}
		})
	}
}

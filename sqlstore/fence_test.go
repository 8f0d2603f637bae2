package sqlstore_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

// TestEndTurnAfterGivenUp: a turn whose followers gave it up (its
// interrupted ending logged: they told their clients turn_interrupted)
// whose process comes back and writes its messages. A round written
// behind and the turn's reply must not be stored (the client retries,
// and history would hold a reply its client was told was interrupted,
// then the question twice), but the turn's spend is still settled and
// its lease released.
func TestEndTurnAfterGivenUp(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db, clock, u, s := budgetSession(t, b, 100_000)
			adm, err := db.AdmitTurn(ctx, admission(s, "A", clock.Now().Add(time.Minute), 10))
			if err != nil {
				t.Fatal(err)
			}
			turn, err := db.BeginTurn(ctx, u.ID, s.ID, "proc_writer", 20)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.AppendEvents(ctx, u.ID, s.ID, turn, []coachd.Event{
				{Turn: turn, Seq: 1, Type: coachd.EventTurnStarted, SessionID: s.ID},
			}, false); err != nil {
				t.Fatal(err)
			}
			looked, err := db.TurnLogAt(ctx, u.ID, s.ID, turn)
			if err != nil {
				t.Fatal(err)
			}
			if given, err := db.GiveUpTurn(ctx, u.ID, s.ID, turn, looked.AliveAt, []coachd.Event{
				{Turn: turn, Seq: 2, Type: coachd.EventError, Err: &coachd.Error{Code: "turn_interrupted", Retryable: true}},
				{Turn: turn, Seq: 3, Type: coachd.EventTurnEnded, StopReason: coachd.TurnError},
			}); err != nil || !given {
				t.Fatalf("give-up: %v, %v", given, err)
			}

			// The writer comes back: a round behind, then its end.
			round := []*coachd.Message{
				{Role: coachd.RoleAssistant, Blocks: []coachd.Block{{Type: coachd.BlockToolUse, ID: "toolu_1", Name: "x", Input: []byte(`{}`)}}},
				{Role: coachd.RoleUser, Blocks: []coachd.Block{{Type: coachd.BlockToolResult, ToolUseID: "toolu_1", Content: []byte(`"ok"`)}}},
			}
			if _, _, err := db.EndTurn(ctx, u.ID, coachd.TurnEnd{SessionID: s.ID, Messages: round, LogTurn: turn,
				ReservationID: adm.Reservation.ID, Spend: coachd.Spend{Amount: 3, Tokens: 3}, Mode: coachd.SettleCharge}); err != nil {
				t.Fatalf("the round's write: %v", err)
			}
			reply := []*coachd.Message{{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("the whole reply")}}}
			if _, _, err := db.EndTurn(ctx, u.ID, coachd.TurnEnd{SessionID: s.ID, Messages: reply, LogTurn: turn,
				ReservationID: adm.Reservation.ID, Spend: coachd.Spend{Amount: 5, Tokens: 5}, Mode: coachd.SettleFinalize, Owner: "A"}); err != nil {
				t.Fatalf("the turn's end: %v", err)
			}
			if reply[0].Seq != 0 || round[0].Seq != 0 {
				t.Errorf("messages given seqs %d, %d: taken for stored", round[0].Seq, reply[0].Seq)
			}
			msgs, err := db.History(ctx, u.ID, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(msgs) != 0 {
				t.Errorf("history holds %d messages of a turn its followers were told was interrupted: %+v", len(msgs), msgs)
			}
			if sess, err := db.FindSession(ctx, u.ID, s.ID); err != nil || sess.MessageCount != 0 {
				t.Errorf("session after: %+v, %v", sess, err)
			}
			r, err := db.FindReservation(ctx, u.ID, adm.Reservation.ID)
			if err != nil {
				t.Fatal(err)
			}
			if r.State != coachd.ReservationFinalized || r.Charged != 5 {
				t.Errorf("the reservation: state %s, charged %d; want finalized with the turn's 5", r.State, r.Charged)
			}
			if err := db.AcquireTurn(ctx, u.ID, s.ID, "B", clock.Now().Add(time.Minute)); err != nil {
				t.Errorf("the lease after the turn's end: %v", err)
			}

			// A turn not given up stores its reply as before.
			if err := db.ReleaseTurn(ctx, u.ID, s.ID, "B"); err != nil {
				t.Fatal(err)
			}
			next, err := db.BeginTurn(ctx, u.ID, s.ID, "proc_writer", 20)
			if err != nil {
				t.Fatal(err)
			}
			ok := []*coachd.Message{{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("kept")}}}
			if _, _, err := db.EndTurn(ctx, u.ID, coachd.TurnEnd{SessionID: s.ID, Messages: ok, LogTurn: next}); err != nil || ok[0].Seq != 1 {
				t.Errorf("a live turn's write: seq %d, %v", ok[0].Seq, err)
			}
		})
	}
}

// TestEndTurnRacesGiveUp (Postgres): the fence of a turn's messages is
// ordered with a give-up by the turn's row, not read from a snapshot.
// A give-up in flight (its UPDATE made, not committed) holds the write
// of the reply until it commits, and then the reply is not stored. A
// reply stored first shows the turn alive: a give-up judged before it
// is refused, so no reader is told turn_interrupted after it.
func TestEndTurnRacesGiveUp(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	clock := newClock()
	db := MustOpen(t, dsn, clock)
	u := budgetUser(t, db, 100_000)
	s := mustSession(t, db, u)
	raw, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	begin := func() int64 {
		t.Helper()
		turn, err := db.BeginTurn(ctx, u.ID, s.ID, "proc_writer", 20)
		if err != nil {
			t.Fatal(err)
		}
		return turn
	}
	reply := func(text string) []*coachd.Message {
		return []*coachd.Message{{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock(text)}}}
	}

	t.Run("GiveUpFirst", func(t *testing.T) {
		turn := begin()
		giveUp, err := raw.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer giveUp.Rollback()
		if _, err := giveUp.ExecContext(ctx, `UPDATE turns SET ended = true WHERE session_id = $1 AND turn = $2`, s.ID, turn); err != nil {
			t.Fatal(err)
		}
		msgs := reply("late")
		done := make(chan error, 1)
		go func() {
			_, _, err := db.EndTurn(ctx, u.ID, coachd.TurnEnd{SessionID: s.ID, Messages: msgs, LogTurn: turn})
			done <- err
		}()
		// The reply's write waits for the give-up's row, or has gone in.
		for waiting := false; !waiting; {
			select {
			case err := <-done:
				t.Fatalf("the reply's write did not wait for the give-up in flight (%v): seq %d", err, msgs[0].Seq)
			case <-time.After(time.Millisecond):
			}
			if err := raw.QueryRowContext(ctx, `SELECT count(*) > 0 FROM pg_stat_activity
				WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
				t.Fatal(err)
			}
		}
		if err := giveUp.Commit(); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil || msgs[0].Seq != 0 {
			t.Errorf("after the give-up committed: seq %d, %v; want nothing stored", msgs[0].Seq, err)
		}
		if sess, err := db.FindSession(ctx, u.ID, s.ID); err != nil || sess.MessageCount != 0 {
			t.Errorf("session after: %+v, %v", sess, err)
		}
	})

	t.Run("ReplyFirst", func(t *testing.T) {
		turn := begin()
		looked, err := db.TurnLogAt(ctx, u.ID, s.ID, turn)
		if err != nil {
			t.Fatal(err)
		}
		msgs := reply("in time")
		if _, _, err := db.EndTurn(ctx, u.ID, coachd.TurnEnd{SessionID: s.ID, Messages: msgs, LogTurn: turn}); err != nil || msgs[0].Seq == 0 {
			t.Fatalf("the reply: seq %d, %v", msgs[0].Seq, err)
		}
		given, err := db.GiveUpTurn(ctx, u.ID, s.ID, turn, looked.AliveAt, nil)
		if err != nil {
			t.Fatal(err)
		}
		if given {
			t.Errorf("a give-up judged before the reply was stored went in: its readers are told turn_interrupted, and history holds the reply")
		}
	})
}

package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore"
)

// TestEndTurnAfterTakeover: replica A's turn stalls past its lease (a
// cut connection, a paused process) and replica B takes the session for
// a new turn before any follower gave A's up. When A comes back, its
// reply must not land in the session B now runs a turn on: history
// would hold A's reply after B's question, answering a question it
// never saw, and B's reply after it.
func TestEndTurnAfterTakeover(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db, clock, u, s := budgetSession(t, b, 100_000)
			// A's lease runs out at once: it stalled past it.
			a := admission(s, "A", clock.Now(), 10)
			a.Stream = &coachd.StreamStart{Owner: "proc_a", Keep: 20}
			a.Message = &coachd.Message{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("A's question")}}
			admA, err := db.AdmitTurn(ctx, a)
			if err != nil {
				t.Fatal(err)
			}

			seen, err := db.FindSession(ctx, u.ID, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			bAdm := admission(seen, "B", clock.Now().Add(10*time.Second), 10)
			bAdm.Stream = &coachd.StreamStart{Owner: "proc_b", Keep: 20}
			bAdm.Message = &coachd.Message{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("B's question")}}
			admB, err := db.AdmitTurn(ctx, bAdm)
			if err != nil {
				t.Fatalf("B's admission after A's lease ran out: %v", err)
			}
			if admB.StreamTurn <= admA.StreamTurn {
				t.Fatalf("B's turn %d after A's %d", admB.StreamTurn, admA.StreamTurn)
			}

			// A comes back: a round behind (fenced by its lease, as the
			// agent writes it), then its reply with its end.
			round := []*coachd.Message{
				{Role: coachd.RoleAssistant, Blocks: []coachd.Block{{Type: coachd.BlockToolUse, ID: "toolu_1", Name: "x", Input: []byte(`{}`)}}},
				{Role: coachd.RoleUser, Blocks: []coachd.Block{{Type: coachd.BlockToolResult, ToolUseID: "toolu_1", Content: []byte(`"ok"`)}}},
			}
			if _, _, err := db.EndTurn(ctx, u.ID, coachd.TurnEnd{SessionID: s.ID, Messages: round, LogTurn: admA.StreamTurn,
				ReservationID: admA.Reservation.ID, Spend: coachd.Spend{Amount: 3, Tokens: 3}, Mode: coachd.SettleCharge, Lease: "A"}); err != nil {
				t.Fatalf("A's round: %v", err)
			}
			reply := []*coachd.Message{{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("A's reply")}}}
			if _, _, err := db.EndTurn(ctx, u.ID, coachd.TurnEnd{SessionID: s.ID, Messages: reply, LogTurn: admA.StreamTurn,
				ReservationID: admA.Reservation.ID, Spend: coachd.Spend{Amount: 5, Tokens: 5}, Mode: coachd.SettleFinalize, Owner: "A"}); err != nil {
				t.Fatalf("A's end: %v", err)
			}
			if round[0].Seq != 0 || reply[0].Seq != 0 {
				t.Errorf("A's messages given seqs %d, %d: taken for stored", round[0].Seq, reply[0].Seq)
			}
			msgs, err := db.History(ctx, u.ID, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(msgs) != 2 || msgs[0].Content != "A's question" || msgs[1].Content != "B's question" {
				for _, m := range msgs {
					t.Logf("stored %d %s %q", m.Seq, m.Role, m.Content)
				}
				t.Errorf("history holds %d messages, want the two questions alone", len(msgs))
			}
			r, err := db.FindReservation(ctx, u.ID, admA.Reservation.ID)
			if err != nil {
				t.Fatal(err)
			}
			if r.State != coachd.ReservationFinalized || r.Charged != 5 {
				t.Errorf("A's reservation: state %s, charged %d; want finalized with its 5", r.State, r.Charged)
			}
			// B's lease is B's still, and B's reply goes in.
			if err := db.AcquireTurn(ctx, u.ID, s.ID, "C", clock.Now().Add(time.Minute)); coachd.ErrorCode(err) != coachd.ETURNINPROGRESS {
				t.Errorf("another owner's lease while B's runs: %v", err)
			}
			ok := []*coachd.Message{{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("B's reply")}}}
			if _, _, err := db.EndTurn(ctx, u.ID, coachd.TurnEnd{SessionID: s.ID, Messages: ok, LogTurn: admB.StreamTurn, Owner: "B"}); err != nil || ok[0].Seq != 3 {
				t.Errorf("B's reply: seq %d, %v", ok[0].Seq, err)
			}
		})
	}
}

// TestRenewTurn: a lease is renewed while it is its owner's, run out or
// not; one another owner took, and released since, is not taken back.
func TestRenewTurn(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db, clock, u, s := budgetSession(t, b, 100_000)
			if err := db.AcquireTurn(ctx, u.ID, s.ID, "A", clock.Now()); err != nil {
				t.Fatal(err)
			}
			if err := db.RenewTurn(ctx, u.ID, s.ID, "A", clock.Now()); err != nil {
				t.Errorf("renewing a lease run out that nobody took: %v", err)
			}
			if err := db.AcquireTurn(ctx, u.ID, s.ID, "B", clock.Now().Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			if err := db.RenewTurn(ctx, u.ID, s.ID, "A", clock.Now().Add(time.Minute)); coachd.ErrorCode(err) != coachd.ETURNINPROGRESS {
				t.Errorf("renewing a lease B holds: %v", err)
			}
			if err := db.ReleaseTurn(ctx, u.ID, s.ID, "B"); err != nil {
				t.Fatal(err)
			}
			if err := db.RenewTurn(ctx, u.ID, s.ID, "A", clock.Now().Add(time.Minute)); coachd.ErrorCode(err) != coachd.ETURNINPROGRESS {
				t.Errorf("renewing a lease B took and released: %v", err)
			}
			if err := db.AcquireTurn(ctx, u.ID, s.ID, "C", clock.Now().Add(time.Minute)); err != nil {
				t.Errorf("the session after: %v", err)
			}
			if err := db.RenewTurn(ctx, u.ID, "sess_none", "C", clock.Now()); coachd.ErrorCode(err) != coachd.ENOTFOUND {
				t.Errorf("another session: %v", err)
			}
		})
	}
}

// TestEndTurnAfterGivenUpNotes: the notes a round's tools staged are not
// created when the round's messages are refused by its fence.
func TestEndTurnAfterGivenUpNotes(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db, clock, u, s := budgetSession(t, b, 100_000)
			adm, looked := admitLogged(t, db, clock, u, s)
			if given, err := db.GiveUpTurn(ctx, u.ID, s.ID, adm.StreamTurn, looked.AliveAt, nil); err != nil || !given {
				t.Fatalf("give-up: %v, %v", given, err)
			}
			note := &coachd.Note{ID: coachd.NewID(coachd.PrefixNote, clock.Now()), UserID: u.ID, SessionID: s.ID,
				Type: "tip", Title: "staged", Content: "c"}
			round := []*coachd.Message{{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("noted")}}}
			if _, _, err := db.EndTurn(ctx, u.ID, coachd.TurnEnd{SessionID: s.ID, Notes: []*coachd.Note{note}, Messages: round,
				LogTurn: adm.StreamTurn, Lease: "A", ReservationID: adm.Reservation.ID, Spend: coachd.Spend{Amount: 3, Tokens: 3},
				Mode: coachd.SettleCharge}); err != nil {
				t.Fatal(err)
			}
			if n, err := db.FindNote(ctx, u.ID, note.ID); coachd.ErrorCode(err) != coachd.ENOTFOUND {
				t.Errorf("the note of a refused round: %+v, %v", n, err)
			}
			if r, err := db.FindReservation(ctx, u.ID, adm.Reservation.ID); err != nil || r.Charged != 3 {
				t.Errorf("the round's charge: %+v, %v", r, err)
			}
		})
	}
}

// TestGiveUpAfterReplyStored: a reader judged the turn dead, then the
// turn's reply was stored (its process came back): the give-up judged
// before it is refused, so no reader is told turn_interrupted about a
// turn whose reply history holds. Postgres had it (the fence stamps the
// turn's row, TestEndTurnRacesGiveUp); SQLite's fence only read the row.
func TestGiveUpAfterReplyStored(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db, clock, u, s := budgetSession(t, b, 100_000)
			adm, looked := admitLogged(t, db, clock, u, s)
			clock.Add(6 * time.Second) // the reader waited DeadAfter; the process came back
			reply := []*coachd.Message{{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("the reply")}}}
			if _, _, err := db.EndTurn(ctx, u.ID, coachd.TurnEnd{SessionID: s.ID, Messages: reply, LogTurn: adm.StreamTurn,
				ReservationID: adm.Reservation.ID, Spend: coachd.Spend{Amount: 5, Tokens: 5}, Mode: coachd.SettleFinalize, Owner: "A"}); err != nil || reply[0].Seq == 0 {
				t.Fatalf("the reply: seq %d, %v", reply[0].Seq, err)
			}
			given, err := db.GiveUpTurn(ctx, u.ID, s.ID, adm.StreamTurn, looked.AliveAt, []coachd.Event{
				{Turn: adm.StreamTurn, Seq: 2, Type: coachd.EventError, Err: &coachd.Error{Code: "turn_interrupted", Retryable: true}},
			})
			if err != nil {
				t.Fatal(err)
			}
			if given {
				t.Error("a give-up judged before the reply was stored went in: its readers are told turn_interrupted, history holds the reply")
			}
		})
	}
}

// admitLogged admits a turn of s in its event log, lease "A" for a
// minute, and reads the log's turn as a reader first looks at it.
func admitLogged(t *testing.T, db *sqlstore.DB, clock *fakeClock, u *coachd.User, s *coachd.Session) (*coachd.Admission, coachd.TurnLog) {
	t.Helper()
	ctx := context.Background()
	a := admission(s, "A", clock.Now().Add(time.Minute), 10)
	a.Stream = &coachd.StreamStart{Owner: "proc_a", Keep: 20}
	adm, err := db.AdmitTurn(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	looked, err := db.TurnLogAt(ctx, u.ID, s.ID, adm.StreamTurn)
	if err != nil {
		t.Fatal(err)
	}
	return adm, looked
}

package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

// TestEndTurnLogRetention: EndTurn with LogTurn and LogKeep deletes the
// session's logged turns (and their events) up to LogTurn - LogKeep, and
// only the user's own: another user naming the session deletes nothing.
func TestEndTurnLogRetention(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			clock := newClock()
			db := MustOpen(t, b.newDSN(t), clock)
			u := budgetUser(t, db, 1_000_000)
			other := budgetUser(t, db, 1_000_000)
			s := mustSession(t, db, u)
			const keep = 2
			for turn := int64(1); turn <= 4; turn++ {
				a := admission(s, "A", clock.Now().Add(time.Minute), 100)
				a.Stream = &coachd.StreamStart{Owner: "proc"} // no retention in the admission
				adm, err := db.AdmitTurn(ctx, a)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := db.AppendEvents(ctx, u.ID, s.ID, adm.StreamTurn, []coachd.Event{
					{Type: coachd.EventTextDelta, Turn: turn, Seq: 1, Text: "hi"}, {Type: coachd.EventTurnEnded, Turn: turn, Seq: 2}}, true); err != nil {
					t.Fatal(err)
				}
				if turn == 4 {
					// Another user's end names the session: nothing goes.
					if _, _, err := db.EndTurn(ctx, other.ID, coachd.TurnEnd{SessionID: s.ID, LogTurn: 4, LogKeep: 1}); err != nil {
						t.Fatal(err)
					}
					if n := rawCount(t, db, `SELECT COUNT(*) FROM turns WHERE session_id = ?`, s.ID); n != keep+1 {
						t.Fatalf("another user's end pruned: %d turns left", n)
					}
				}
				if _, _, err := db.EndTurn(ctx, u.ID, coachd.TurnEnd{SessionID: s.ID, ReservationID: adm.Reservation.ID,
					Mode: coachd.SettleFinalize, Owner: "A", LogTurn: adm.StreamTurn, LogKeep: keep}); err != nil {
					t.Fatal(err)
				}
				if s, err = db.FindSession(ctx, u.ID, s.ID); err != nil {
					t.Fatal(err)
				}
				want := min(turn, keep)
				if n := rawCount(t, db, `SELECT COUNT(*) FROM turns WHERE session_id = ? AND turn > ?`, s.ID, turn-want); n != want {
					t.Fatalf("after turn %d: %d of the last %d turns logged", turn, n, want)
				}
				if n := rawCount(t, db, `SELECT COUNT(*) FROM turns WHERE session_id = ?`, s.ID); n != want {
					t.Fatalf("after turn %d: %d turns logged, want %d", turn, n, want)
				}
				evs, err := db.Events(ctx, u.ID, s.ID, coachd.EventID{}, 100)
				if err != nil || int64(len(evs)) != 2*want || evs[0].Turn != turn-want+1 {
					t.Fatalf("after turn %d: %d events %+v (%v), want those of the last %d turns", turn, len(evs), evs, err, want)
				}
			}
		})
	}
}

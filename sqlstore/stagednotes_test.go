package sqlstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

// TestEndTurnNotes: the notes a round's tools staged are created by the
// round's write (TurnEnd.Notes) with the IDs the tools reported, and
// counted as the user's live notes; one that cannot be (the cap reached
// meanwhile, another user's session, an ID or a field that is not a
// note's) fails the whole write: no note, no message, no charge.
func TestEndTurnNotes(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db, clock, u, s := budgetSession(t, b, 100_000)
			adm, err := db.AdmitTurn(ctx, admission(s, "A", clock.Now().Add(time.Minute), 100))
			if err != nil {
				t.Fatal(err)
			}
			resv := adm.Reservation.ID
			staged := func(sessionID, title string) *coachd.Note {
				return &coachd.Note{ID: coachd.NewID(coachd.PrefixNote, clock.Now()), UserID: u.ID, SessionID: sessionID,
					Type: "tip", Title: title, Content: "c"}
			}
			round := func(notes ...*coachd.Note) error {
				_, _, err := db.EndTurn(ctx, u.ID, coachd.TurnEnd{SessionID: s.ID, Notes: notes,
					Messages:      []*coachd.Message{{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("noted")}}},
					ReservationID: resv, Spend: coachd.Spend{Amount: 10, Tokens: 10}, Mode: coachd.SettleCharge})
				return err
			}
			// stored says what the writes left: the session's messages, the
			// user's live notes and the reservation's charge.
			stored := func() string {
				t.Helper()
				sess, err := db.FindSession(ctx, u.ID, s.ID)
				if err != nil {
					t.Fatal(err)
				}
				user, err := db.FindUserByID(ctx, u.ID)
				if err != nil {
					t.Fatal(err)
				}
				r, err := db.FindReservation(ctx, u.ID, resv)
				if err != nil {
					t.Fatal(err)
				}
				return fmt.Sprintf("messages=%d notes=%d charged=%d", sess.MessageCount, user.LiveNotes, r.Charged)
			}

			a, c := staged(s.ID, "first"), staged(s.ID, "second")
			if err := round(a, c); err != nil {
				t.Fatal(err)
			}
			for _, n := range []*coachd.Note{a, c} {
				got, err := db.FindNote(ctx, u.ID, n.ID)
				if err != nil {
					t.Fatalf("staged note %s: %v", n.ID, err)
				}
				if got.Title != n.Title || got.SessionID != s.ID || n.CreatedAt.IsZero() || !got.CreatedAt.Equal(n.CreatedAt) || got.Importance != coachd.DefaultImportance {
					t.Fatalf("stored %+v, staged %+v", got, n)
				}
			}
			after := stored()
			if after != "messages=1 notes=2 charged=10" {
				t.Fatalf("after the round: %s", after)
			}

			other := mustSession(t, db, budgetUser(t, db, 100_000))
			bad := staged(s.ID, "bad id")
			bad.ID = "note_x"
			foreign := staged(other.ID, "another's session")
			for name, c := range map[string]struct {
				notes []*coachd.Note
				code  string
			}{
				"invalid":       {[]*coachd.Note{staged(s.ID, "")}, coachd.EINVALID},
				"bad id":        {[]*coachd.Note{bad}, coachd.EINVALID},
				"other session": {[]*coachd.Note{foreign}, coachd.EINVALID},
				"used id":       {[]*coachd.Note{a}, coachd.ECONFLICT},
			} {
				if err := round(c.notes...); coachd.ErrorCode(err) != c.code {
					t.Errorf("%s: %v, want %s", name, err, c.code)
				}
			}
			// A session not the user's, though the note says it is.
			_, _, err = db.EndTurn(ctx, u.ID, coachd.TurnEnd{SessionID: other.ID, Notes: []*coachd.Note{foreign}})
			if coachd.ErrorCode(err) != coachd.ENOTFOUND {
				t.Errorf("another user's session: %v, want not found", err)
			}

			// Filled to one below the cap behind the turn's back: the
			// round's two notes do not fit, and nothing of it is stored.
			for i := 2; i < coachd.MaxNotesPerUser-1; i++ {
				if err := db.CreateNote(ctx, &coachd.Note{UserID: u.ID, Type: "tip", Title: fmt.Sprint(i), Content: "c"}); err != nil {
					t.Fatal(err)
				}
			}
			last, over := staged(s.ID, "last"), staged(s.ID, "over")
			if err := round(last, over); coachd.ErrorCode(err) != coachd.ECONFLICT {
				t.Fatalf("over the cap: %v, want conflict", err)
			}
			if got := stored(); got != fmt.Sprintf("messages=1 notes=%d charged=10", coachd.MaxNotesPerUser-1) {
				t.Fatalf("after the refused writes: %s", got)
			}
			if _, err := db.FindNote(ctx, u.ID, last.ID); coachd.ErrorCode(err) != coachd.ENOTFOUND {
				t.Fatalf("a note of the refused write: %v", err)
			}
			if err := round(last); err != nil {
				t.Fatalf("the last note that fits: %v", err)
			}
			MustLedgerOK(t, db)
		})
	}
}

package sqlstore_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

// TestEndTurnSession: the session EndTurn returns when it stores the
// turn's reply and releases its lease is the stored session, and a turn
// may start from it without reading: its admission is refused after any
// change a turn reads, even one the update time does not show (the
// clock is frozen here, so every write stores the same time).
func TestEndTurnSession(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db, clock, u, s := budgetSession(t, b, 100_000)
			until := clock.Now().Add(time.Minute)
			reply := func() []*coachd.Message {
				return []*coachd.Message{{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("done")}}}
			}
			// turn admits a turn from seen and ends it with a reply,
			// returning the session EndTurn left.
			turn := func(seen *coachd.Session) *coachd.Session {
				t.Helper()
				adm, err := db.AdmitTurn(ctx, admission(seen, "A", until, 10))
				if err != nil {
					t.Fatalf("admission from %+v: %v", seen, err)
				}
				_, got, err := db.EndTurn(ctx, u.ID, coachd.TurnEnd{SessionID: s.ID, Messages: reply(),
					ReservationID: adm.Reservation.ID, Spend: coachd.Spend{Amount: 5, Tokens: 5}, Mode: coachd.SettleFinalize, Owner: "A"})
				if err != nil {
					t.Fatal(err)
				}
				stored, err := db.FindSession(ctx, u.ID, s.ID)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, stored) {
					t.Fatalf("EndTurn's session\n%+v\nthe stored one\n%+v", got, stored)
				}
				return got
			}
			seen := turn(s)
			if seen.MessageCount != 1 {
				t.Fatalf("after one reply: %+v", seen)
			}
			seen = turn(seen) // the next turn starts from it as it is
			if seen.MessageCount != 2 {
				t.Fatalf("after two replies: %+v", seen)
			}

			// No session without both a reply stored and the lease released.
			adm, err := db.AdmitTurn(ctx, admission(seen, "A", until, 10))
			if err != nil {
				t.Fatal(err)
			}
			if _, got, err := db.EndTurn(ctx, u.ID, coachd.TurnEnd{SessionID: s.ID, Messages: reply(),
				ReservationID: adm.Reservation.ID, Spend: coachd.Spend{Amount: 5, Tokens: 5}, Mode: coachd.SettleCharge}); err != nil || got != nil {
				t.Fatalf("a round's write: session %+v, %v", got, err)
			}
			if _, got, err := db.EndTurn(ctx, u.ID, coachd.TurnEnd{SessionID: s.ID, ReservationID: adm.Reservation.ID,
				Mode: coachd.SettleFinalize, Owner: "A"}); err != nil || got != nil {
				t.Fatalf("an end without a reply: session %+v, %v", got, err)
			}
			seen, err = db.FindSession(ctx, u.ID, s.ID)
			if err != nil {
				t.Fatal(err)
			}

			// Each change a turn reads refuses an admission from the
			// session as it was, at the same update time.
			str := func(v string) *string { return &v }
			completed := coachd.SessionCompleted
			active := coachd.SessionActive
			pending := &coachd.PendingInteraction{ToolUseID: "toolu_1", Name: "ask", Input: []byte(`{}`), ExpiresAt: until}
			for _, c := range []struct {
				name string
				upd  coachd.SessionUpdate
			}{
				{"title", coachd.SessionUpdate{Title: str("renamed")}},
				{"mode", coachd.SessionUpdate{Mode: str("arc")}},
				{"status", coachd.SessionUpdate{Status: &completed}},
				{"status back", coachd.SessionUpdate{Status: &active}},
				{"pending call", coachd.SessionUpdate{SetPending: true, Pending: pending}},
				{"no pending call", coachd.SessionUpdate{SetPending: true}},
			} {
				now, err := db.UpdateSession(ctx, u.ID, s.ID, c.upd)
				if err != nil {
					t.Fatal(err)
				}
				if !now.UpdatedAt.Equal(seen.UpdatedAt) || now.MessageCount != seen.MessageCount {
					t.Fatalf("%s: the update moved the time or the count: %+v from %+v", c.name, now, seen)
				}
				if _, err := db.AdmitTurn(ctx, admission(seen, "A", until, 10)); err != coachd.ErrSessionChanged {
					t.Fatalf("%s changed: admission from the session before it: %v, want ErrSessionChanged", c.name, err)
				}
				seen = now
			}
			turn(seen)
		})
	}
}

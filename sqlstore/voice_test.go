package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

func TestVoiceSessions(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			clock := newClock()
			db := MustOpen(t, b.newDSN(t), clock)
			u := MustCreateUser(t, db, "a")
			other := MustCreateUser(t, db, "b")
			s := &coachd.Session{UserID: u.ID, Agent: "coach", Title: "t"}
			if err := db.CreateSession(ctx, s); err != nil {
				t.Fatal(err)
			}
			t.Run("NewestFirst", func(t *testing.T) {
				first := &coachd.VoiceSession{UserID: u.ID, SessionID: s.ID, Agent: "coach", Model: "gpt-realtime", Voice: "alloy",
					ExpiresAt: clock.Now().Add(time.Minute)}
				if err := db.CreateVoiceSession(ctx, first); err != nil {
					t.Fatal(err)
				}
				if !coachd.ValidID(coachd.PrefixVoice, first.ID) {
					t.Fatalf("id %q", first.ID)
				}
				clock.Add(time.Second)
				second := &coachd.VoiceSession{UserID: u.ID, Agent: "coach", Model: "gpt-realtime", Voice: "verse",
					ExpiresAt: clock.Now().Add(time.Minute)}
				if err := db.CreateVoiceSession(ctx, second); err != nil {
					t.Fatal(err)
				}
				got, next, err := db.ListVoiceSessions(ctx, u.ID, coachd.Page{Limit: 1})
				if err != nil || len(got) != 1 || next == "" || got[0].ID != second.ID || got[0].SessionID != "" {
					t.Fatalf("page 1 = %+v %q %v", got, next, err)
				}
				got, next, err = db.ListVoiceSessions(ctx, u.ID, coachd.Page{Limit: 1, Cursor: next})
				if err != nil || len(got) != 1 || next != "" {
					t.Fatalf("page 2 = %+v %q %v", got, next, err)
				}
				if g := got[0]; g.ID != first.ID || g.SessionID != s.ID || g.Voice != "alloy" || g.Model != "gpt-realtime" ||
					!g.ExpiresAt.Equal(first.ExpiresAt) || !g.CreatedAt.Equal(first.CreatedAt) {
					t.Fatalf("first = %+v, want %+v", g, first)
				}
			})
			t.Run("ScopedToUser", func(t *testing.T) {
				got, _, err := db.ListVoiceSessions(ctx, other.ID, coachd.Page{})
				if err != nil || len(got) != 0 {
					t.Fatalf("other user sees %d voice sessions, %v", len(got), err)
				}
				v := &coachd.VoiceSession{UserID: other.ID, SessionID: s.ID, Agent: "coach", Model: "m", Voice: "alloy", ExpiresAt: clock.Now()}
				if err := db.CreateVoiceSession(ctx, v); coachd.ErrorCode(err) != coachd.ENOTFOUND {
					t.Fatalf("another user's session: %v, want not_found", err)
				}
			})
			t.Run("ErrInvalid", func(t *testing.T) {
				v := &coachd.VoiceSession{UserID: u.ID, Agent: "coach", Voice: "alloy", ExpiresAt: clock.Now()}
				if err := db.CreateVoiceSession(ctx, v); coachd.ErrorCode(err) != coachd.EINVALID {
					t.Fatalf("no model: %v", err)
				}
			})
			t.Run("SessionDeleteKeepsRecord", func(t *testing.T) {
				if err := db.DeleteSession(ctx, u.ID, s.ID); err != nil {
					t.Fatal(err)
				}
				got, _, err := db.ListVoiceSessions(ctx, u.ID, coachd.Page{})
				if err != nil || len(got) != 2 || got[1].SessionID != "" {
					t.Fatalf("after session delete: %+v %v", got, err)
				}
				if err := db.DeleteUser(ctx, u.ID); err != nil {
					t.Fatal(err)
				}
				if got, _, _ := db.ListVoiceSessions(ctx, u.ID, coachd.Page{}); len(got) != 0 {
					t.Fatalf("after user delete: %d records", len(got))
				}
			})
		})
	}
}

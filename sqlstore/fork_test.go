package sqlstore_test

import (
	"testing"

	"github.com/coachd/coachd"
)

// TestForkSession: a fork is a new session of the same agent holding
// copies of the first n messages, blocks and all; the original is left
// as it was, another user's session is not found, and a fingerprint
// remembers how many messages its conversation holds.
func TestForkSession(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			db := MustOpen(t, b.newDSN(t), newClock())
			u, other := MustCreateUser(t, db, "a"), MustCreateUser(t, db, "b")
			s := MustCreateSession(t, db, u.ID)
			msgs := []*coachd.Message{
				{Role: coachd.RoleUser, Content: "plan my night"},
				{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("Airport first.")}, Usage: &coachd.Usage{OutputTokens: 3}},
				{Role: coachd.RoleUser, Content: "and then?"},
				{Role: coachd.RoleAssistant, Content: "Downtown."},
			}
			if err := db.AppendMessages(ctx, u.ID, s.ID, msgs); err != nil {
				t.Fatal(err)
			}
			t.Run("OK", func(t *testing.T) {
				f, err := db.ForkSession(ctx, u.ID, s.ID, 2)
				if err != nil {
					t.Fatal(err)
				}
				if f.ID == s.ID || f.Agent != s.Agent || f.Status != coachd.SessionActive || f.MessageCount != 2 {
					t.Fatalf("fork: %+v", f)
				}
				got, err := db.History(ctx, u.ID, f.ID)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != 2 || got[0].Content != "plan my night" || got[1].Blocks[0].Text != "Airport first." ||
					got[1].ID == msgs[1].ID || got[1].Usage != nil {
					t.Errorf("fork's messages: %+v", got)
				}
				if orig, _ := db.History(ctx, u.ID, s.ID); len(orig) != 4 {
					t.Errorf("the original has %d messages, want 4", len(orig))
				}
			})
			t.Run("ErrNotFound", func(t *testing.T) {
				_, err := db.ForkSession(ctx, other.ID, s.ID, 1)
				wantCode(t, err, coachd.ENOTFOUND)
			})
			t.Run("ErrRange", func(t *testing.T) {
				_, err := db.ForkSession(ctx, u.ID, s.ID, 5)
				wantCode(t, err, coachd.EINVALID)
			})
			t.Run("Fingerprint", func(t *testing.T) {
				if err := db.SaveFingerprint(ctx, u.ID, "fp", s.ID, 2); err != nil {
					t.Fatal(err)
				}
				if err := db.SaveFingerprint(ctx, u.ID, "fp-now", s.ID, -1); err != nil {
					t.Fatal(err)
				}
				for fp, want := range map[string]int64{"fp": 2, "fp-now": 4} {
					if id, n, err := db.FindFingerprint(ctx, u.ID, fp); err != nil || id != s.ID || n != want {
						t.Errorf("%s: %s %d %v, want %d", fp, id, n, err, want)
					}
				}
				if err := rawExec(t, db, `UPDATE chat_fingerprints SET message_count = NULL WHERE fingerprint = 'fp'`); err != nil {
					t.Fatal(err)
				}
				if _, n, err := db.FindFingerprint(ctx, u.ID, "fp"); err != nil || n != -1 {
					t.Errorf("a row saved before the count was kept: %d %v, want -1", n, err)
				}
			})
		})
	}
}

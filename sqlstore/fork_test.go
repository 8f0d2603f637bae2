package sqlstore_test

import (
	"bytes"
	"fmt"
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
					if id, n, _, err := db.FindFingerprint(ctx, u.ID, fp); err != nil || id != s.ID || n != want {
						t.Errorf("%s: %s %d %v, want %d", fp, id, n, err, want)
					}
				}
				if err := rawExec(t, db, `UPDATE chat_fingerprints SET message_count = NULL WHERE fingerprint = 'fp'`); err != nil {
					t.Fatal(err)
				}
				if _, n, _, err := db.FindFingerprint(ctx, u.ID, "fp"); err != nil || n != -1 {
					t.Errorf("a row saved before the count was kept: %d %v, want -1", n, err)
				}
			})
			t.Run("Shared", func(t *testing.T) {
				// Saved again with its session, a fingerprint is its
				// alone; once with another, shared for good.
				other := MustCreateSession(t, db, u.ID)
				for i, save := range []struct {
					sid    string
					shared bool
				}{{s.ID, false}, {s.ID, false}, {other.ID, true}, {other.ID, true}, {s.ID, true}} {
					if err := db.SaveFingerprint(ctx, u.ID, "fp-shared", save.sid, 2); err != nil {
						t.Fatal(err)
					}
					if id, _, shared, err := db.FindFingerprint(ctx, u.ID, "fp-shared"); err != nil || id != save.sid || shared != save.shared {
						t.Errorf("save %d: %s shared %v %v, want %s shared %v", i, id, shared, err, save.sid, save.shared)
					}
				}
			})
		})
	}
}

// TestForkSessionOmitsOldAttachments: a fork (a Regenerate, an edit)
// holds the data of the attachments a turn may still send from its
// point, the newest coachd.MaxHistoryAttachments; older ones are copied
// without their data, as a turn reads them, not as megabytes of photos
// stored twice that no turn of the fork can send.
func TestForkSessionOmitsOldAttachments(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			db := MustOpen(t, b.newDSN(t), newClock())
			u := MustCreateUser(t, db, "a")
			s := MustCreateSession(t, db, u.ID)
			photo := func(i int) coachd.Block {
				return coachd.AttachmentBlock(coachd.MediaPNG, "", append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{byte(i)}, 3000)...))
			}
			const older, after = 4, 3 // photos before the window, and after the fork's point
			for i := range coachd.MaxHistoryAttachments + older + after {
				if err := db.AppendMessages(ctx, u.ID, s.ID, []*coachd.Message{
					{Role: coachd.RoleUser, Blocks: []coachd.Block{photo(i), coachd.TextBlock(fmt.Sprintf("day %d", i))}},
					{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("noted")}},
				}); err != nil {
					t.Fatal(err)
				}
			}
			n := int64(2 * (coachd.MaxHistoryAttachments + older))
			f, err := db.ForkSession(ctx, u.ID, s.ID, n)
			if err != nil {
				t.Fatal(err)
			}
			got, err := db.History(ctx, u.ID, f.ID)
			if err != nil || int64(len(got)) != n {
				t.Fatalf("the fork's history: %d messages, %v", len(got), err)
			}
			orig, err := db.History(ctx, u.ID, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			omitted := 0
			for i, m := range got {
				if m.Content != orig[i].Content {
					t.Fatalf("message %d: %q, want %q", i, m.Content, orig[i].Content)
				}
				if m.Role != coachd.RoleUser {
					continue
				}
				b := m.Blocks[0]
				gt, gn, _ := coachd.AttachmentInfo(b)
				wt, wn, _ := coachd.AttachmentInfo(orig[i].Blocks[0])
				if gt != wt || gn != wn {
					t.Fatalf("message %d's attachment is %s %d bytes, want %s %d", i, gt, gn, wt, wn)
				}
				if coachd.AttachmentOmitted(b) {
					omitted++
				} else if !bytes.Equal(b.Source, orig[i].Blocks[0].Source) {
					t.Fatalf("message %d's attachment changed", i)
				}
			}
			if omitted != older || coachd.AttachmentOmitted(got[len(got)-2].Blocks[0]) {
				t.Errorf("the fork left out the data of %d attachments, want the %d oldest", omitted, older)
			}
			// What a turn of the fork reads is what one of the session
			// read at that point: the same attachments sent.
			_, turn, err := db.ReadTurn(ctx, u.ID, f.ID, 0)
			if err != nil {
				t.Fatal(err)
			}
			for i, m := range turn {
				if coachd.AttachmentOmitted(m.Blocks[0]) != coachd.AttachmentOmitted(got[i].Blocks[0]) {
					t.Errorf("message %d: a turn reads its attachment otherwise than the fork holds it", i)
				}
			}
		})
	}
}

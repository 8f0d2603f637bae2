package sqlstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

// The user's row counts the user's live notes (users.live_notes, read by
// the cap check): after every note write, refused ones included, it is
// what the notes table holds, on both backends.
func TestLiveNotesCount(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			db := MustOpen(t, b.newDSN(t), newClock())
			u, other := MustCreateUser(t, db, "a"), MustCreateUser(t, db, "b")
			sess, othersSess := MustCreateSession(t, db, u.ID), MustCreateSession(t, db, other.ID)
			check := func(step string) {
				t.Helper()
				for _, id := range []string{u.ID, other.ID} {
					counted := rawCount(t, db, `SELECT live_notes FROM users WHERE id = ?`, id)
					live := rawCount(t, db, `SELECT COUNT(*) FROM notes WHERE user_id = ? AND deleted_at IS NULL`, id)
					if counted != live {
						t.Fatalf("after %s: user %s counts %d live notes, the table holds %d", step, id, counted, live)
					}
				}
			}
			note := func(userID, sessionID string) *coachd.Note {
				return &coachd.Note{UserID: userID, SessionID: sessionID, Type: "tip", Title: "t", Content: "c"}
			}
			var ids []string
			for i := range 3 {
				n := note(u.ID, "")
				if i > 0 {
					n.SessionID = sess.ID
				}
				if err := db.CreateNote(ctx, n); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, n.ID)
			}
			check("creates")
			wantCode(t, db.CreateNote(ctx, note(u.ID, othersSess.ID)), coachd.ENOTFOUND)
			wantCode(t, db.CreateNote(ctx, note(u.ID, "sess_missing")), coachd.ENOTFOUND)
			wantCode(t, db.CreateNote(ctx, note("user_missing", "")), coachd.ENOTFOUND)
			check("refused creates")
			if err := db.CreateNote(ctx, note(other.ID, othersSess.ID)); err != nil {
				t.Fatal(err)
			}
			check("another user's create")
			if err := db.DeleteNote(ctx, u.ID, ids[0]); err != nil {
				t.Fatal(err)
			}
			wantCode(t, db.DeleteNote(ctx, u.ID, ids[0]), coachd.ENOTFOUND)
			wantCode(t, db.DeleteNote(ctx, other.ID, ids[1]), coachd.ENOTFOUND)
			check("deletes")
			if _, err := db.RestoreNote(ctx, u.ID, ids[0]); err != nil {
				t.Fatal(err)
			}
			if _, err := db.RestoreNote(ctx, u.ID, ids[0]); err != nil { // not deleted: no change
				t.Fatal(err)
			}
			check("restores")
			title := "new"
			if _, err := db.UpdateNote(ctx, u.ID, ids[1], coachd.NoteUpdate{Title: &title}); err != nil {
				t.Fatal(err)
			}
			if err := db.DeleteSession(ctx, u.ID, sess.ID); err != nil {
				t.Fatal(err)
			}
			check("an update and the session's deletion")
			if err := db.DeleteNote(ctx, u.ID, ids[2]); err != nil {
				t.Fatal(err)
			}
			check("a note of a deleted session deleted")
			if got := rawCount(t, db, `SELECT live_notes FROM users WHERE id = ?`, u.ID); got != 2 {
				t.Fatalf("live notes %d, want 2", got)
			}
		})
	}
}

// 0014_live_notes counts the live notes a database already holds.
func TestMigrateLiveNotes(t *testing.T) {
	path, raw, exec := sqliteBefore(t, "0014_")
	users := map[string]int{"user_a": 0, "user_b": 0, "user_c": 0}
	n := 0
	for id := range users {
		exec(`INSERT INTO users (id, api_key_hash, created_at, updated_at) VALUES (?, ?, 0, 0)`, id, "h"+id)
	}
	for id, live := range map[string][2]int{"user_a": {3, 2}, "user_b": {0, 4}, "user_c": {5, 0}} {
		for i := range live[0] + live[1] {
			var deleted any
			if i >= live[0] {
				deleted = time.Now().UnixMicro()
			}
			n++
			exec(`INSERT INTO notes (id, user_id, note_type, title, content, deleted_at, created_at, updated_at) VALUES (?, ?, 'tip', 't', 'c', ?, 0, 0)`,
				fmt.Sprintf("note_%d", n), id, deleted)
		}
		users[id] = live[0]
	}
	raw.Close()

	db := MustOpen(t, path, coachd.SystemClock{})
	for id, want := range users {
		if got := rawCount(t, db, `SELECT live_notes FROM users WHERE id = ?`, id); got != int64(want) {
			t.Errorf("%s: live_notes %d after 0014, want %d", id, got, want)
		}
	}
	if got := rawCount(t, db, `SELECT COUNT(*) FROM sqlite_master WHERE name = 'notes_live'`); got != 0 {
		t.Errorf("notes_live still there after 0014")
	}
}

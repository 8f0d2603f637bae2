package sqlstore_test

import (
	"context"
	"testing"

	"github.com/coachd/coachd"
)

// testScoping checks that user B cannot see or touch anything of user A's
// through any method: every attempt is ENOTFOUND, as for a missing row,
// and A's data is unchanged afterwards.
func testScoping(t *testing.T, newDSN func(tb testing.TB) string) {
	ctx := context.Background()
	db := MustOpen(t, newDSN(t), newClock())
	a := MustCreateUser(t, db, "a")
	b := MustCreateUser(t, db, "b")
	s := MustCreateSession(t, db, a.ID)
	if err := db.AppendMessages(ctx, a.ID, s.ID, []*coachd.Message{{Role: coachd.RoleUser, Content: "secret"}}); err != nil {
		t.Fatal(err)
	}
	n := &coachd.Note{UserID: a.ID, SessionID: s.ID, Type: "tip", Title: "t", Content: "secret"}
	if err := db.CreateNote(ctx, n); err != nil {
		t.Fatal(err)
	}
	deleted := &coachd.Note{UserID: a.ID, Type: "tip", Title: "t", Content: "gone"}
	if err := db.CreateNote(ctx, deleted); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteNote(ctx, a.ID, deleted.ID); err != nil {
		t.Fatal(err)
	}

	for name, call := range map[string]func() error{
		"FindSession": func() error { _, err := db.FindSession(ctx, b.ID, s.ID); return err },
		"UpdateSession": func() error {
			_, err := db.UpdateSession(ctx, b.ID, s.ID, coachd.SessionUpdate{Title: ptr("pwned")})
			return err
		},
		"DeleteSession": func() error { return db.DeleteSession(ctx, b.ID, s.ID) },
		"AppendMessages": func() error {
			return db.AppendMessages(ctx, b.ID, s.ID, []*coachd.Message{{Role: coachd.RoleUser, Content: "x"}})
		},
		"AppendMessagesEmpty": func() error { return db.AppendMessages(ctx, b.ID, s.ID, nil) },
		"ListMessages":        func() error { _, _, err := db.ListMessages(ctx, b.ID, s.ID, coachd.Page{}); return err },
		"History":             func() error { _, err := db.History(ctx, b.ID, s.ID); return err },
		"CreateNoteInSession": func() error {
			return db.CreateNote(ctx, &coachd.Note{UserID: b.ID, SessionID: s.ID, Type: "tip", Title: "t", Content: "c"})
		},
		"FindNote": func() error { _, err := db.FindNote(ctx, b.ID, n.ID); return err },
		"UpdateNote": func() error {
			_, err := db.UpdateNote(ctx, b.ID, n.ID, coachd.NoteUpdate{Title: ptr("pwned")})
			return err
		},
		"TogglePin":   func() error { _, err := db.TogglePin(ctx, b.ID, n.ID); return err },
		"DeleteNote":  func() error { return db.DeleteNote(ctx, b.ID, n.ID) },
		"RestoreNote": func() error { _, err := db.RestoreNote(ctx, b.ID, deleted.ID); return err },
	} {
		t.Run("Err"+name, func(t *testing.T) { wantCode(t, call(), coachd.ENOTFOUND) })
	}
	t.Run("Listings", func(t *testing.T) {
		if got, _, err := db.ListSessions(ctx, b.ID, coachd.Page{}); err != nil || len(got) != 0 {
			t.Fatalf("B's sessions = %d, %v", len(got), err)
		}
		if got, _, err := db.ListNotes(ctx, b.ID, coachd.NoteFilter{IncludeDeleted: true}, coachd.Page{}); err != nil || len(got) != 0 {
			t.Fatalf("B's notes = %d, %v", len(got), err)
		}
		if st, err := db.NoteStats(ctx, b.ID); err != nil || st.Total != 0 || st.Deleted != 0 {
			t.Fatalf("B's stats = %+v, %v", st, err)
		}
	})
	t.Run("Unchanged", func(t *testing.T) {
		got, err := db.FindSession(ctx, a.ID, s.ID)
		if err != nil || got.Title != s.Title || got.MessageCount != 1 {
			t.Fatalf("A's session = %+v, %v", got, err)
		}
		if msgs, err := db.History(ctx, a.ID, s.ID); err != nil || len(msgs) != 1 {
			t.Fatalf("A's messages = %d, %v", len(msgs), err)
		}
		note, err := db.FindNote(ctx, a.ID, n.ID)
		if err != nil || note.Title != "t" || note.Pinned || note.DeletedAt != nil {
			t.Fatalf("A's note = %+v, %v", note, err)
		}
		if d, err := db.FindNote(ctx, a.ID, deleted.ID); err != nil || d.DeletedAt == nil {
			t.Fatalf("A's deleted note = %+v, %v", d, err)
		}
	})
}

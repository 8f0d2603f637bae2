package sqlstore_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore"
)

// fillNotes inserts n notes of the user straight into the table, in one
// transaction, and counts the live ones as the store does (setup only:
// the caps are then tested through the store).
func fillNotes(tb testing.TB, db *sqlstore.DB, userID string, n int, deleted bool) {
	tb.Helper()
	ctx := context.Background()
	tx, err := db.SQL().BeginTx(ctx, nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer tx.Rollback()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var del any
	if deleted {
		del = rawTime(db, now)
	}
	q := db.Rebind(`INSERT INTO notes (id, user_id, note_type, category, title, content, importance, market_slug, pinned, deleted_at, created_at, updated_at)
		VALUES (?, ?, 'tip', '', 't', 'c', 50, '', ?, ?, ?, ?)`)
	for i := range n {
		if _, err := tx.ExecContext(ctx, q, fmt.Sprintf("note_fill_%s_%t_%05d", userID, deleted, i), userID, false, del,
			rawTime(db, now), rawTime(db, now)); err != nil {
			tb.Fatal(err)
		}
	}
	if !deleted {
		// The store counts a user's live notes on the user's row in the
		// same transaction as every note write (noteRoom): so does this.
		if _, err := tx.ExecContext(ctx, db.Rebind(`UPDATE users SET live_notes = live_notes + ? WHERE id = ?`), n, userID); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
}

// fillFiles inserts n files of size bytes each, likewise.
func fillFiles(tb testing.TB, db *sqlstore.DB, userID string, n, size int) {
	tb.Helper()
	ctx := context.Background()
	tx, err := db.SQL().BeginTx(ctx, nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer tx.Rollback()
	now := rawTime(db, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	content := strings.Repeat("x", size)
	q := db.Rebind(`INSERT INTO files (id, user_id, file_type, name, content, attributes, bytes, created_at, updated_at)
		VALUES (?, ?, 'capture', ?, ?, '{}', ?, ?, ?)`)
	for i := range n {
		if _, err := tx.ExecContext(ctx, q, fmt.Sprintf("file_fill_%s_%05d", userID, i), userID, fmt.Sprintf("fill-%05d", i),
			content, size, now, now); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
}

func wantLimit(tb testing.TB, err error, msg string) {
	tb.Helper()
	wantCode(tb, err, coachd.ECONFLICT)
	if got := coachd.ErrorMessage(err); !strings.Contains(got, msg) {
		tb.Fatalf("message %q, want it to say %q", got, msg)
	}
}

// TestSecurityNoteCaps: issue 20 finding 8 (caps). Nothing capped a
// user's notes; now the 1,001st live note is refused with a clear error
// (create and restore), concurrent creates cannot overshoot, and deleted
// notes beyond the newest 1,000 are purged.
func TestSecurityNoteCaps(t *testing.T) {
	ctx := context.Background()
	note := func(userID string) *coachd.Note {
		return &coachd.Note{UserID: userID, Type: "tip", Title: "t", Content: "c"}
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Run("Create", func(t *testing.T) {
				db := MustOpen(t, b.newDSN(t), newClock())
				u, other := MustCreateUser(t, db, "a"), MustCreateUser(t, db, "b")
				fillNotes(t, db, u.ID, coachd.MaxNotesPerUser-1, false)
				last := note(u.ID)
				if err := db.CreateNote(ctx, last); err != nil {
					t.Fatalf("note %d: %v", coachd.MaxNotesPerUser, err)
				}
				wantLimit(t, db.CreateNote(ctx, note(u.ID)), "note limit reached (1000 notes): delete some first")
				if err := db.CreateNote(ctx, note(other.ID)); err != nil {
					t.Fatalf("another user's note: %v", err)
				}
				if err := db.DeleteNote(ctx, u.ID, last.ID); err != nil {
					t.Fatal(err)
				}
				if err := db.CreateNote(ctx, note(u.ID)); err != nil {
					t.Fatalf("after a delete: %v", err)
				}
				_, err := db.RestoreNote(ctx, u.ID, last.ID)
				wantLimit(t, err, "note limit reached")
				if got := rawCount(t, db, `SELECT COUNT(*) FROM notes WHERE user_id = ? AND deleted_at IS NULL`, u.ID); got != coachd.MaxNotesPerUser {
					t.Fatalf("live notes = %d, want %d", got, coachd.MaxNotesPerUser)
				}
			})
			t.Run("Concurrent", func(t *testing.T) {
				db := MustOpen(t, b.newDSN(t), newClock())
				u := MustCreateUser(t, db, "a")
				fillNotes(t, db, u.ID, coachd.MaxNotesPerUser-5, false)
				var wg sync.WaitGroup
				errs := make([]error, 20)
				for i := range errs {
					wg.Go(func() { errs[i] = db.CreateNote(ctx, note(u.ID)) })
				}
				wg.Wait()
				ok := 0
				for _, err := range errs {
					if err == nil {
						ok++
					} else {
						wantLimit(t, err, "note limit reached")
					}
				}
				if got := rawCount(t, db, `SELECT COUNT(*) FROM notes WHERE user_id = ?`, u.ID); ok != 5 || got != coachd.MaxNotesPerUser {
					t.Fatalf("%d creates succeeded, %d notes stored; want 5 and %d", ok, got, coachd.MaxNotesPerUser)
				}
			})
			t.Run("DeletedPurged", func(t *testing.T) {
				db := MustOpen(t, b.newDSN(t), newClock())
				u := MustCreateUser(t, db, "a")
				fillNotes(t, db, u.ID, coachd.MaxDeletedNotesPerUser, true)
				n := note(u.ID)
				if err := db.CreateNote(ctx, n); err != nil {
					t.Fatal(err)
				}
				if err := db.DeleteNote(ctx, u.ID, n.ID); err != nil {
					t.Fatal(err)
				}
				if got := rawCount(t, db, `SELECT COUNT(*) FROM notes WHERE user_id = ?`, u.ID); got != coachd.MaxDeletedNotesPerUser {
					t.Fatalf("rows = %d, want %d", got, coachd.MaxDeletedNotesPerUser)
				}
				if _, err := db.RestoreNote(ctx, u.ID, n.ID); err != nil {
					t.Fatalf("the newest deleted note must stay restorable: %v", err)
				}
			})
		})
	}
}

// TestSecurityFileCaps: issue 20 finding 8 (caps). Nothing capped a
// user's files; now the 501st file, or a save taking the user past 20 MiB
// of content, is refused with a clear error, replacing a file still
// works, and concurrent saves cannot overshoot.
func TestSecurityFileCaps(t *testing.T) {
	ctx := context.Background()
	file := func(userID, name string, size int) *coachd.File {
		return &coachd.File{UserID: userID, Type: "capture", Name: name, Content: strings.Repeat("y", size)}
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Run("Count", func(t *testing.T) {
				db := MustOpen(t, b.newDSN(t), newClock())
				u := MustCreateUser(t, db, "a")
				fillFiles(t, db, u.ID, coachd.MaxFilesPerUser-1, 10)
				if err := db.SaveFile(ctx, file(u.ID, "last", 10)); err != nil {
					t.Fatalf("file %d: %v", coachd.MaxFilesPerUser, err)
				}
				wantLimit(t, db.SaveFile(ctx, file(u.ID, "one-more", 10)), "file limit reached (500 files)")
				if err := db.SaveFile(ctx, file(u.ID, "last", 20)); err != nil {
					t.Fatalf("replacing a file at the cap: %v", err)
				}
			})
			t.Run("Bytes", func(t *testing.T) {
				db := MustOpen(t, b.newDSN(t), newClock())
				u := MustCreateUser(t, db, "a")
				fillFiles(t, db, u.ID, coachd.MaxFileBytesPerUser/coachd.FileContentMax, coachd.FileContentMax)
				room := coachd.MaxFileBytesPerUser % coachd.FileContentMax
				if err := db.SaveFile(ctx, file(u.ID, "last", room-10)); err != nil {
					t.Fatalf("up to the cap: %v", err)
				}
				wantLimit(t, db.SaveFile(ctx, file(u.ID, "over", 11)), "file storage limit reached (20 MiB")
				wantLimit(t, db.SaveFile(ctx, file(u.ID, "last", room+1)), "file storage limit reached")
				if err := db.SaveFile(ctx, file(u.ID, "last", room)); err != nil {
					t.Fatalf("exactly at the cap: %v", err)
				}
				if err := db.SaveFile(ctx, file(u.ID, "last", 5)); err != nil {
					t.Fatalf("shortening a file: %v", err)
				}
			})
			t.Run("Concurrent", func(t *testing.T) {
				db := MustOpen(t, b.newDSN(t), newClock())
				u := MustCreateUser(t, db, "a")
				fillFiles(t, db, u.ID, coachd.MaxFilesPerUser-3, 10)
				var wg sync.WaitGroup
				errs := make([]error, 12)
				for i := range errs {
					wg.Go(func() { errs[i] = db.SaveFile(ctx, file(u.ID, fmt.Sprintf("new-%d", i), 10)) })
				}
				wg.Wait()
				ok := 0
				for _, err := range errs {
					if err == nil {
						ok++
					} else {
						wantLimit(t, err, "file limit reached")
					}
				}
				if got := rawCount(t, db, `SELECT COUNT(*) FROM files WHERE user_id = ?`, u.ID); ok != 3 || got != coachd.MaxFilesPerUser {
					t.Fatalf("%d saves succeeded, %d files stored; want 3 and %d", ok, got, coachd.MaxFilesPerUser)
				}
			})
		})
	}
}

// TestSecuritySessionCaps: issue 20 finding 8, the conversation half:
// sessions per user and messages per session are capped with a clear 409.
func TestSecuritySessionCaps(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db := MustOpen(t, b.newDSN(t), newClock())
			u := MustCreateUser(t, db, "a")
			other := MustCreateUser(t, db, "b")
			s := &coachd.Session{UserID: u.ID}
			if err := db.CreateSession(ctx, s); err != nil {
				t.Fatal(err)
			}
			// Fill the user's sessions up to the cap in one transaction.
			tx, err := db.SQL().BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			q := `INSERT INTO sessions (id, user_id, agent, title, mode, status, message_count, next_seq, created_at, updated_at) VALUES ($1, $2, '', '', '', 'active', 0, 1, $3, $3)`
			if b.name == "sqlite" {
				q = strings.NewReplacer("$1", "?", "$2", "?", "$3", "?").Replace(q)
			}
			for i := 1; i < coachd.MaxSessionsPerUser; i++ {
				var at any = int64(i)
				if b.name != "sqlite" {
					at = time.Unix(int64(i), 0)
				}
				args := []any{fmt.Sprintf("sess_fill%021d", i), u.ID, at}
				if b.name == "sqlite" {
					args = []any{args[0], args[1], at, at}
				}
				if _, err := tx.ExecContext(ctx, q, args...); err != nil {
					t.Fatal(err)
				}
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			err = db.CreateSession(ctx, &coachd.Session{UserID: u.ID})
			wantCode(t, err, coachd.ECONFLICT)
			// It says how: an OpenAI-door chat UI cannot delete sessions,
			// and forks count too.
			if !strings.Contains(err.Error(), "session limit reached") || !strings.Contains(err.Error(), "DELETE /v1/sessions/{id}") {
				t.Fatalf("message: %v", err)
			}
			if err := db.CreateSession(ctx, &coachd.Session{UserID: other.ID}); err != nil {
				t.Fatalf("another user is limited by a's sessions: %v", err)
			}
			// Messages: a session at its cap takes no more.
			if _, err := db.SQL().ExecContext(ctx, rebind(b.name, `UPDATE sessions SET message_count = $1 WHERE id = $2`), coachd.MaxMessagesPerSession-1, s.ID); err != nil {
				t.Fatal(err)
			}
			msg := func() []*coachd.Message {
				return []*coachd.Message{{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("hi")}}}
			}
			if err := db.AppendMessages(ctx, u.ID, s.ID, msg()); err != nil {
				t.Fatalf("the last message that fits: %v", err)
			}
			err = db.AppendMessages(ctx, u.ID, s.ID, msg())
			wantCode(t, err, coachd.ECONFLICT)
			if !strings.Contains(err.Error(), "session is full") {
				t.Fatalf("message: %v", err)
			}
			// Refused with nothing written (on Postgres the rows are in
			// the statement that found the session full).
			var stored int
			if err := db.SQL().QueryRowContext(ctx, rebind(b.name, `SELECT COUNT(*) FROM messages WHERE session_id = $1`), s.ID).Scan(&stored); err != nil || stored != 1 {
				t.Fatalf("%d messages stored (%v), want the one that fit", stored, err)
			}
		})
	}
}

func rebind(dialect, q string) string {
	if dialect == "sqlite" {
		return strings.NewReplacer("$1", "?", "$2", "?").Replace(q)
	}
	return q
}

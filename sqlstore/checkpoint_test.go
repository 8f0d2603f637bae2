package sqlstore

import (
	"context"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

// The writer's commits never checkpoint (wal_autocheckpoint is off on
// its connection); the checkpointer does, on its own connection, once
// every so many pages, and the WAL then starts over instead of growing.
func TestCheckpointerBoundsTheWAL(t *testing.T) {
	db := openGrouped(t)
	ctx := context.Background()
	var auto int
	if err := db.write.QueryRow(`PRAGMA wal_autocheckpoint`).Scan(&auto); err != nil || auto != 0 {
		t.Fatalf("writer's wal_autocheckpoint = %d, %v; want 0", auto, err)
	}
	const every = 50
	db.ckpt.every = every
	u := &coachd.User{Name: "ada", TokenBudget: 10}
	if err := db.CreateUser(ctx, u, "hash-ada"); err != nil {
		t.Fatal(err)
	}
	wal := db.walPath(t)
	frame := int64(4096 + 24)
	content := strings.Repeat("a note long enough to fill pages. ", 100)
	var most int64
	for range 400 {
		if err := db.CreateNote(ctx, &coachd.Note{UserID: u.ID, Type: "tip", Title: "t", Content: content}); err != nil {
			t.Fatal(err)
		}
		// Each kick's checkpoint done before the next write, so the bound
		// below holds however the goroutines are scheduled.
		deadline := time.Now().Add(10 * time.Second)
		for db.ckpt.runs.Load() < db.ckpt.kicks.Load() {
			if time.Now().After(deadline) {
				t.Fatalf("the checkpointer was kicked %d times and ran %d", db.ckpt.kicks.Load(), db.ckpt.runs.Load())
			}
			runtime.Gosched()
		}
		fi, err := os.Stat(wal)
		if err != nil {
			t.Fatal(err)
		}
		most = max(most, fi.Size()/frame)
	}
	pages := db.pages.Load()
	t.Logf("%d pages, %d checkpoints, WAL at most %d frames", pages, db.ckpt.runs.Load(), most)
	if db.ckpt.runs.Load() < pages/every/2 {
		t.Fatalf("%d checkpoints for %d pages written, want about one per %d", db.ckpt.runs.Load(), pages, every)
	}
	// Without checkpoints the WAL would hold every page written.
	if most > 3*every || pages < 4*every {
		t.Fatalf("WAL grew to %d frames with %d pages written; want at most %d", most, pages, 3*every)
	}
}

func (db *DB) walPath(t *testing.T) string {
	var seq int
	var name, file string
	if err := db.write.QueryRow(`PRAGMA database_list`).Scan(&seq, &name, &file); err != nil {
		t.Fatal(err)
	}
	return file + "-wal"
}

package main

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/client"
)

// TestBackupWhileServing: an operator backing up a live SQLite database
// had no documented way that works (copying coachd.db misses what is
// still in its -wal file, and the distroless image has no sqlite3 to run
// .backup). coachd backup writes a consistent copy, owner-only, of the
// database a running coachd serves, and the copy holds the turn just
// stored; it never overwrites a file, and sends PostgreSQL to pg_dump.
func TestBackupWhileServing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "coachd.db")
	p := MustStart(t, nil, "--db", db, "--demo", "--demo-delay", "0s")
	sid, err := client.New(p.url, p.key, nil).ChatStream(ctx, client.ChatRequest{Message: "remember that I drive mornings"},
		client.StreamOptions{}, func(client.Event) error { return nil })
	if err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(dir, "backup.db")
	var stdout, stderr syncBuffer
	if err := run(ctx, []string{"coachd", "backup", "--db", db, "--out", out}, getenvFrom(nil), &stdout, &stderr); err != nil {
		t.Fatalf("backup: %v\n%s", err, stderr.String())
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("backup file: %v %v, want mode 0600", fi, err)
	}
	raw, err := sql.Open("sqlite", out)
	if err != nil {
		t.Fatal(err)
	}
	var check string
	if err := raw.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q %v", check, err)
	}
	raw.Close()
	copyDB := mustOpen(t, out)
	users, _, err := copyDB.ListUsers(ctx, coachd.Page{})
	if err != nil || len(users) != 1 {
		t.Fatalf("users in the copy: %d %v", len(users), err)
	}
	live, _, err := client.New(p.url, p.key, nil).Messages(ctx, sid, coachd.Page{})
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := copyDB.History(ctx, users[0].ID, sid)
	if err != nil || len(msgs) != len(live) || len(msgs) < 2 || msgs[0].Content != "remember that I drive mornings" {
		t.Fatalf("the copy holds %d of the turn's %d messages, %v", len(msgs), len(live), err)
	}

	// The copy is never written over, and Postgres is pg_dump's.
	for _, args := range [][]string{{"--db", db, "--out", out}, {"--db", "postgres://u@127.0.0.1:1/db", "--out", filepath.Join(dir, "pg.db")}} {
		err := run(ctx, append([]string{"coachd", "backup"}, args...), getenvFrom(nil), &stdout, &syncBuffer{})
		if err == nil {
			t.Errorf("backup %v succeeded", args)
		} else if msg := err.Error(); !strings.Contains(msg, "exists") && !strings.Contains(msg, "pg_dump") {
			t.Errorf("backup %v: %v", args, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "pg.db")); !os.IsNotExist(err) {
		t.Errorf("a refused backup left its file: %v", err)
	}
}

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeWarnsDatabaseReadableByOthers: coachd makes a new SQLite
// file owner-only, but one made before it did (or restored with the
// umask's 0644) keeps its mode, and SQLite gives its -wal and -shm
// files the same: every user's conversations readable by any local
// account, silently. serve now says so at start, naming the fix.
func TestServeWarnsDatabaseReadableByOthers(t *testing.T) {
	for _, c := range []struct {
		mode os.FileMode
		warn bool
	}{{0o644, true}, {0o600, false}} {
		dbPath := filepath.Join(t.TempDir(), "coachd.db")
		if err := run(context.Background(), []string{"coachd", "migrate", "--db", dbPath}, getenvFrom(nil), &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dbPath, c.mode); err != nil {
			t.Fatal(err)
		}
		p := MustServe(t, map[string]string{"COACHD_ADDR": "127.0.0.1:0"}, "--db", dbPath)
		if err := p.stop(t); err != nil {
			t.Fatal(err)
		}
		logs := p.stderr.String() + p.stdout.String()
		if got := strings.Contains(logs, "readable by other users") && strings.Contains(logs, "chmod 600"); got != c.warn {
			t.Errorf("mode %o: warned %v, want %v; logs:\n%s", c.mode, got, c.warn, logs)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestCommandDuringMigration: `coachd users create` run while another
// process migrates a new SQLite file (serve just started on it) waits for
// that migration instead of refusing the file as "not at this coachd's
// schema". The two run at once on a fresh file each time; the command
// starts as soon as the file exists, inside the migration's window.
func TestCommandDuringMigration(t *testing.T) {
	ctx := context.Background()
	for i := range 20 {
		db := filepath.Join(t.TempDir(), "c.db")
		migrated := make(chan error, 1)
		go func() {
			var out, errb bytes.Buffer
			migrated <- run(ctx, []string{"coachd", "migrate", "--db", db}, getenvFrom(nil), &out, &errb)
		}()
		// Spin until the migration made the file (or failed first).
		for len(migrated) == 0 {
			if _, err := os.Stat(db); err == nil {
				break
			}
		}
		var out, errb bytes.Buffer
		err := run(ctx, []string{"coachd", "users", "create", "--name", "ana", "--db", db}, getenvFrom(nil), &out, &errb)
		if merr := <-migrated; merr != nil {
			t.Fatalf("run %d: migrate: %v", i, merr)
		}
		if err != nil {
			t.Fatalf("run %d: users create during the migration: %v\n%s", i, err, errb.String())
		}
	}
}

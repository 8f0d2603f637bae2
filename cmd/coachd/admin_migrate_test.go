package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAdminCommandsDoNotMigrate: users create, review and autobuild
// write to the database but are not the server. Run from a newer coachd
// against the database the running replicas use, they migrated it, as
// the read-only commands once did: the schema changed under the
// replicas. On a schema behind they refuse and say to run coachd migrate,
// leaving it as it was; once it is current they work. A database that
// does not exist yet is still made (a first install).
func TestAdminCommandsDoNotMigrate(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	reqs := filepath.Join(dir, "reqs.txt")
	if err := os.WriteFile(reqs, []byte("- says hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{
		{"users", "create", "--name", "ada"},
		{"review", "--requirements", reqs, "--workspace", ws},
		{"autobuild", "--requirements", reqs, "--workspace", ws},
	} {
		t.Run(cmd[0], func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "old.db")
			n := mustOldDB(t, path)
			out := &syncBuffer{}
			err := run(ctx, append(append([]string{"coachd"}, cmd...), "--db", path), getenvFrom(nil), out, out)
			if err == nil || !strings.Contains(err.Error(), "coachd migrate") {
				t.Errorf("%v on an older schema: %v\n%s; want an error that says to run coachd migrate", cmd, err, out)
			}
			if got := appliedMigrations(t, path); got != n {
				t.Errorf("%v migrated the database: %d migrations applied, want %d as it was", cmd, got, n)
			}
			if err := run(ctx, []string{"coachd", "migrate", "--db", path}, getenvFrom(nil), out, out); err != nil {
				t.Fatal(err)
			}
			if cmd[0] != "users" {
				return // a review's verdict is not this test's
			}
			out = &syncBuffer{}
			if err := run(ctx, []string{"coachd", "users", "create", "--name", "bea", "--db", path}, getenvFrom(nil), out, out); err != nil || !strings.HasPrefix(out.String(), "ck_") {
				t.Errorf("%v on a current schema: %v\n%s", cmd, err, out)
			}
		})
	}
}

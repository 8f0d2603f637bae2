package main

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/sqlstore/pgtest"
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

// TestAdminCommandsDoNotMigratePostgres: the same on PostgreSQL, where
// the replicas' database usually is: users create refuses a schema one
// migration behind, leaving it so, and works once it is current.
func TestAdminCommandsDoNotMigratePostgres(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	out := &syncBuffer{}
	if err := run(ctx, []string{"coachd", "migrate", "--db", dsn}, getenvFrom(nil), out, out); err != nil {
		t.Fatalf("migrate: %v\n%s", err, out)
	}
	raw, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	// What an older coachd left: its last migration not applied (the
	// row alone is enough for the schema check).
	var version int64
	var name string
	if err := raw.QueryRowContext(ctx, `DELETE FROM schema_migrations WHERE version = (SELECT MAX(version) FROM schema_migrations) RETURNING version, name`).Scan(&version, &name); err != nil {
		t.Fatal(err)
	}
	count := func() (n int) {
		t.Helper()
		if err := raw.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := count()
	err = run(ctx, []string{"coachd", "users", "create", "--name", "ada", "--db", dsn}, getenvFrom(nil), out, out)
	if err == nil || !strings.Contains(err.Error(), "coachd migrate") {
		t.Errorf("users create on an older schema: %v\n%s; want an error that says to run coachd migrate", err, out)
	}
	if got := count(); got != before {
		t.Errorf("users create migrated the database: %d migrations applied, want %d", got, before)
	}
	if _, err := raw.ExecContext(ctx, `INSERT INTO schema_migrations VALUES ($1, $2, '')`, version, name); err != nil {
		t.Fatal(err)
	}
	out = &syncBuffer{}
	if err := run(ctx, []string{"coachd", "users", "create", "--name", "bea", "--db", dsn}, getenvFrom(nil), out, out); err != nil || !strings.HasPrefix(out.String(), "ck_") {
		t.Errorf("users create on a current schema: %v\n%s", err, out)
	}
}

package main

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mustOldDB makes at path the database an older coachd left: every
// migration but the last. It returns the number applied.
func mustOldDB(t *testing.T, path string) int {
	t.Helper()
	ctx := context.Background()
	files, err := filepath.Glob(filepath.Join("..", "..", "sqlstore", "migrations", "sqlite", "*.sql"))
	if err != nil || len(files) < 2 {
		t.Fatalf("migrations: %v %v", files, err)
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	mustExec := func(q string, args ...any) {
		t.Helper()
		if _, err := raw.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%.60s: %v", q, err)
		}
	}
	mustExec(`CREATE TABLE schema_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`)
	for i, f := range files[:len(files)-1] {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		mustExec(string(b))
		mustExec(`INSERT INTO schema_migrations VALUES (?, ?, '')`, i+1, filepath.Base(f))
	}
	return len(files) - 1
}

// appliedMigrations is how many migrations the SQLite file at path has.
func appliedMigrations(t *testing.T, path string) int {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var n int
	if err := raw.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM schema_migrations`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// doctor and users list only read. Run from a newer coachd (a new
// image's shell, an operator's laptop) against the database the running
// replicas use, they migrated it: the schema changed under those
// replicas, which from then on answered /readyz 503 ("newer than this
// coachd knows"), all of them at once. A read-only command leaves the
// schema alone and says what to run.
func TestReadOnlyCommandsDoNotMigrate(t *testing.T) {
	ctx := context.Background()
	for _, cmd := range [][]string{{"doctor"}, {"users", "list"}} {
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
	}
}

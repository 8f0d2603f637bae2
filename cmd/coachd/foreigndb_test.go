package main

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/sqlstore/pgtest"
)

// TestForeignDatabaseNotToMigrate: doctor and users pointed at a
// database that is not coachd's (tables of its own, no schema_migrations;
// a --db typo) said it was "not at this coachd's schema" and to run coachd
// migrate, which installs coachd's tables beside the other application's.
// They say it is not a coachd database and to check --db, exiting 1 (not
// a usage error), on SQLite and on PostgreSQL.
func TestForeignDatabaseNotToMigrate(t *testing.T) {
	ctx := context.Background()
	sqlitePath := filepath.Join(t.TempDir(), "other.db")
	for _, c := range []struct{ driver, dsn string }{
		{"sqlite", sqlitePath},
		{"pgx", pgtest.NewDatabase(t)},
	} {
		raw, err := sql.Open(c.driver, c.dsn)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := raw.ExecContext(ctx, `CREATE TABLE invoices (id INTEGER PRIMARY KEY)`); err != nil {
			t.Fatal(err)
		}
		raw.Close()
		for _, cmd := range [][]string{{"doctor"}, {"users", "list"}, {"users", "create", "--name", "ada"}} {
			out := &syncBuffer{}
			err := run(ctx, append(append([]string{"coachd"}, cmd...), "--db", c.dsn), getenvFrom(nil), out, out)
			if err == nil || errors.Is(err, errUsage) || strings.Contains(err.Error(), "run coachd migrate") ||
				!strings.Contains(err.Error(), "not a coachd database") {
				t.Errorf("%s: %v on another application's database: %v\n%s; want a failure saying it is not a coachd database, not to migrate it", c.driver, cmd, err, out)
			}
		}
	}
}

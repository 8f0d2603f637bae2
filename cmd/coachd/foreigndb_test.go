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
	for _, c := range otherAppDatabases(t, `CREATE TABLE invoices (id INTEGER PRIMARY KEY)`) {
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

// otherAppDB is another application's database: a SQLite file or a
// Postgres database, and a connection to it of its own.
type otherAppDB struct {
	driver, dsn string
	raw         *sql.DB
}

// otherAppDatabases makes a SQLite file and a Postgres database holding
// what stmts make, another application's, not coachd's.
func otherAppDatabases(t *testing.T, stmts ...string) []otherAppDB {
	t.Helper()
	dbs := []otherAppDB{{driver: "sqlite", dsn: filepath.Join(t.TempDir(), "other.db")}, {driver: "pgx", dsn: pgtest.NewDatabase(t)}}
	for i := range dbs {
		raw, err := sql.Open(dbs[i].driver, dbs[i].dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { raw.Close() })
		for _, q := range stmts {
			if _, err := raw.ExecContext(context.Background(), q); err != nil {
				t.Fatal(err)
			}
		}
		dbs[i].raw = raw
	}
	return dbs
}

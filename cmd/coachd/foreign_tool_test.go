package main

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestForeignSchemaMigrationsTable: another application migrated with
// golang-migrate, dbmate or Rails has a schema_migrations table of its
// own, so coachd took its database for one of coachd's: serve and
// migrate said the schema was "newer than this coachd knows: upgrade
// coachd" (or applied migrations until the other tool's table refused
// the record), doctor and users to run coachd migrate. A
// schema_migrations without coachd's columns is another tool's: each
// command says it is not a coachd database, and changes nothing.
func TestForeignSchemaMigrationsTable(t *testing.T) {
	ctx := context.Background()
	for _, c := range otherAppDatabases(t,
		`CREATE TABLE schema_migrations (version BIGINT NOT NULL PRIMARY KEY, dirty BOOLEAN NOT NULL)`,
		`INSERT INTO schema_migrations VALUES (20240101120000, false)`,
		`CREATE TABLE invoices (id INTEGER PRIMARY KEY)`,
	) {
		for _, cmd := range [][]string{{"migrate"}, {"serve"}, {"migrate", "--share-db"}, {"doctor"}, {"users", "list"}} {
			out, err := runUntilListening(t, append(cmd, "--db", c.dsn)...)
			if err == nil || errors.Is(err, errUsage) || !strings.Contains(err.Error(), "not a coachd database") {
				t.Errorf("%s: %v on a database another tool migrated: %v\n%s; want a refusal saying it is not a coachd database", c.driver, cmd, err, out)
			}
			var n int
			if err := c.raw.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n != 1 {
				t.Errorf("%s: %v changed the other tool's schema_migrations: %d rows, %v", c.driver, cmd, n, err)
			}
		}
	}
}

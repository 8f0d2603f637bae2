package main

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/coachd/coachd/sqlstore/pgtest"
)

// TestPostgresSchemaMissing: coachd in a schema of its own is
// search_path=coachd in the URL (README); before CREATE SCHEMA coachd,
// serve and migrate failed with "internal: migrate: create
// schema_migrations: ERROR: no schema has been selected to create in".
// They now say the search_path's schema does not exist and to create it.
func TestPostgresSchemaMissing(t *testing.T) {
	dsn := pgtest.NewDatabase(t) + "&search_path=coachd"
	for _, cmd := range []string{"migrate", "serve"} {
		out, err := runUntilListening(t, cmd, "--db", dsn)
		if err == nil || !strings.Contains(err.Error(), "CREATE SCHEMA coachd") || strings.Contains(err.Error(), "internal:") {
			t.Errorf("%s with search_path naming no schema: %v\n%s; want it to say CREATE SCHEMA coachd", cmd, err, out)
		}
	}
	raw, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`CREATE SCHEMA coachd`); err != nil {
		t.Fatal(err)
	}
	if out, err := runUntilListening(t, "migrate", "--db", dsn); err != nil {
		t.Errorf("migrate once the schema exists: %v\n%s", err, out)
	}
}

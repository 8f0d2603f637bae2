package main

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/coachd/coachd/sqlstore/pgtest"
)

// TestPostgresUserMayNotCreate: PostgreSQL 15 and later no longer let
// every user create tables in schema public, so coachd's user, given a
// database it does not own as a tutorial says, failed at its first
// start with "internal: migrate: create schema_migrations: ERROR:
// permission denied for schema public". serve and migrate now say which
// user may not create tables in which schema, and the GRANT that fixes it.
func TestPostgresUserMayNotCreate(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	raw, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, q := range []string{`DROP ROLE IF EXISTS coachd_app`, `CREATE ROLE coachd_app LOGIN`, `REVOKE CREATE ON SCHEMA public FROM PUBLIC`} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { raw.Exec(`DROP ROLE IF EXISTS coachd_app`) })
	app := strings.Replace(dsn, "://coachd@", "://coachd_app@", 1)
	if app == dsn {
		t.Fatalf("no user to replace in %s", dsn)
	}
	for _, cmd := range []string{"migrate", "serve"} {
		out, err := runUntilListening(t, cmd, "--db", app)
		if err == nil || !strings.Contains(err.Error(), "GRANT CREATE ON SCHEMA public TO coachd_app") || strings.Contains(err.Error(), "internal:") {
			t.Errorf("%s as a user who may not create tables: %v\n%s; want the GRANT that fixes it", cmd, err, out)
		}
	}
	if _, err := raw.Exec(`GRANT CREATE ON SCHEMA public TO coachd_app`); err != nil {
		t.Fatal(err)
	}
	if out, err := runUntilListening(t, "migrate", "--db", app); err != nil {
		t.Errorf("migrate after the GRANT: %v\n%s", err, out)
	}
}

package datasource_test

import (
	"database/sql"
	"fmt"
	"testing"

	"github.com/coachd/coachd/sqlstore/pgtest"
)

const pgArrayFile = `dsn: %s
user_key: name
tables:
  profiles:
    scope: user_id
    columns: [platforms, zones]
actions:
  set_profile:
    description: Record the driver's platforms and zones.
    table: profiles
    insert: {platforms: $platforms, zones: $zones}
    input_schema:
      type: object
      properties:
        platforms: {type: array, items: {type: string}}
        zones: {type: array, items: {type: integer}}
`

// TestPostgresArrays: an action writing a list to a Postgres array
// column (text[], int[]: how Drizzle and many apps keep a driver's
// platforms) bound the list as its JSON text, which Postgres refuses
// ("malformed array literal"): no such write could ever succeed. A list
// is written as the array it is, quotes and commas in its text kept.
func TestPostgresArrays(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE profiles (user_id text NOT NULL, platforms text[], zones int[])`); err != nil {
		t.Fatal(err)
	}
	tools := loadTools(t, fmt.Sprintf(pgArrayFile, dsn))
	if res := callTool(t, tools, "set_profile", `{"platforms":["uber","lyft, \"xl\"","a\\b",null],"zones":[3,14]}`); res.IsError {
		t.Fatalf("set_profile: %s", res.Content)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM profiles WHERE user_id = 'alice'
		AND platforms = ARRAY['uber', 'lyft, "xl"', 'a\b', NULL]::text[] AND zones = ARRAY[3, 14]`).Scan(&n); err != nil || n != 1 {
		var got string
		db.QueryRow(`SELECT platforms::text || ' ' || zones::text FROM profiles`).Scan(&got)
		t.Fatalf("stored %q (%d rows as written, %v)", got, n, err)
	}
}

package datasource_test

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/coachd/coachd/sqlstore/pgtest"
)

// TestPostgresWrongTypedValue: Postgres checks a where value against its
// column's type, where SQLite's affinity takes anything. A value of the
// wrong type (a word for an integer, true for an integer, 2 for a
// boolean, a time it cannot read) is the model's to fix: its result says
// the database refused that value, naming the value and the type, whole
// (the model read "the app's database failed: …" cut after 60 bytes,
// before the value, as the database being down), and names the column
// when the driver could not even send it.
func TestPostgresWrongTypedValue(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE items (id TEXT PRIMARY KEY, user_id TEXT NOT NULL, n integer, active boolean, at timestamptz)`); err != nil {
		t.Fatal(err)
	}
	tools := loadTools(t, `dsn: `+dsn+`
user_key: name
tables:
  items: {scope: user_id, columns: [id, n, active, at]}
queries:
  by_n:
    description: An item by n.
    table: items
    where: {n: $n}
    input_schema: {type: object, properties: {n: {type: string}}}
`)
	for _, c := range []struct{ tool, in, want string }{
		{"query_data", `{"table":"items","where":{"n":"abc"}}`, `invalid input syntax for type integer: "abc"`},
		{"query_data", `{"table":"items","where":{"at":"soon"}}`, `invalid input syntax for type timestamp with time zone: "soon"`},
		{"query_data", `{"table":"items","where":{"id":"i1","n":true}}`, `where.n: unable to encode true into binary format for int4`},
		{"query_data", `{"table":"items","where":{"active":2}}`, `where.active: unable to encode 2 into binary format for bool`},
		{"by_n", `{"n":"abc"}`, `invalid input syntax for type integer: "abc"`},
	} {
		res := callTool(t, tools, c.tool, c.in)
		if !res.IsError || !strings.Contains(res.Content, c.want) || !strings.HasPrefix(res.Content, "the app's database refused a value") ||
			len(res.Content) > 400 {
			t.Errorf("%s %s:\n got %q\nwant an error naming %q", c.tool, c.in, res.Content, c.want)
		}
	}
}

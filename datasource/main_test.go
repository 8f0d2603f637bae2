package datasource_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/datasource"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Shutdown()
	os.Exit(code)
}

// fixture is the app database every test reads: alice's and bob's rows,
// shared venues, and a view that runs for ever.
var fixture = []string{
	`CREATE TABLE events (id TEXT PRIMARY KEY, user_id TEXT NOT NULL, title TEXT NOT NULL, city TEXT, rank INTEGER,
		is_active INTEGER NOT NULL DEFAULT 1, secret TEXT, note TEXT)`,
	`CREATE TABLE venues (id TEXT PRIMARY KEY, name TEXT NOT NULL, city TEXT)`,
	`CREATE TABLE zones (id TEXT PRIMARY KEY, owner TEXT NOT NULL, name TEXT NOT NULL, created_at TEXT)`,
	`CREATE TABLE big (id INTEGER PRIMARY KEY, user_id TEXT NOT NULL, body TEXT)`,
	`INSERT INTO events VALUES
		('a1', 'alice', 'Taylor Swift Concert', 'Arlington', 1, 1, 'alice-secret', NULL),
		('a2', 'alice', 'Jazz Concert', 'Dallas', 2, 1, 'alice-secret', NULL),
		('a3', 'alice', 'Mavericks Game', 'Dallas', 3, 1, 'alice-secret', NULL),
		('a4', 'alice', '100% Fun_Run', 'Dallas', 4, 1, 'alice-secret', NULL),
		('b1', 'bob', 'Taylor Swift Concert', 'Arlington', 1, 1, 'BOBSECRET', NULL),
		('b2', 'bob', 'Bob Private Party', 'Plano', 2, 1, 'BOBSECRET', NULL)`,
	`INSERT INTO venues VALUES ('v1', 'AT&T Stadium', 'Arlington'), ('v2', 'American Airlines Center', 'Dallas')`,
	`INSERT INTO zones VALUES ('z1', 'bob', 'Bob zone', '2026-01-01')`,
}

const dataFile = `dsn: %s
user_key: name
max_rows: 20
timeout: 1s
tables:
  events:
    scope: user_id
    columns: [id, title, city, rank, is_active]
  venues:
    shared: true
    columns: [id, name, city]
  zones:
    shared: true
    scope: owner
    columns: [id, name]
  big:
    scope: user_id
    columns: [id, user_id, body]
  slow:
    scope: user_id
    columns: [n]
queries:
  active_events:
    description: Active events, by title; city narrows them.
    table: events
    columns: [id, title]
    where: {is_active: 1, city: $city}
    order_by: [title]
    input_schema:
      type: object
      properties:
        city: {type: string}
actions:
  deactivate:
    description: Deactivate one of the user's events.
    table: events
    update:
      key: id
      match:
        - {input: id, column: id}
        - {input: title, column: title, fuzzy: true}
      where: {is_active: 1}
      set: {is_active: 0, note: $note}
    input_schema:
      type: object
      properties:
        id: {type: string}
        title: {type: string}
        note: {type: string}
  add_zone:
    description: Add a zone.
    table: zones
    insert: {id: $uuid, name: $name, created_at: $now}
    input_schema:
      type: object
      properties:
        name: {type: string}
`

// backend makes an app database of one dialect, with the fixture.
type backend struct {
	name string
	// open returns the data file's dsn and a handle the test inspects the
	// database with.
	open func(t testing.TB) (string, *sql.DB)
}

var backends = []backend{
	{"sqlite", func(t testing.TB) (string, *sql.DB) {
		path := filepath.Join(t.TempDir(), "app.db")
		db := mustExec(t, "sqlite", path, `CREATE VIEW slow AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c)
			SELECT 'alice' AS user_id, count(*) AS n FROM c`)
		return "sqlite:" + path, db
	}},
	{"postgres", func(t testing.TB) (string, *sql.DB) {
		dsn := pgtest.NewDatabase(t)
		db := mustExec(t, "pgx", dsn, `CREATE VIEW slow AS SELECT 'alice'::text AS user_id, count(*) AS n
			FROM generate_series(1, 2000000000) AS g`)
		return dsn, db
	}},
}

func mustExec(t testing.TB, driver, dsn, slow string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for _, q := range append(fixture, slow) {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for i := range 300 {
		if _, err := db.Exec(fmt.Sprintf(`INSERT INTO big VALUES (%d, 'alice', '%s')`, i, strings.Repeat("x", 5000))); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// env is an opened data source over one backend.
type env struct {
	db    *sql.DB
	tools map[string]coachd.Tool
	set   *datasource.Set
	// before is a dump taken when the env was opened.
	before string
}

func openEnv(t testing.TB, b backend) *env {
	t.Helper()
	dsn, db := b.open(t)
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "data"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, "data", "app.yaml"), []byte(fmt.Sprintf(dataFile, dsn)), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := datasource.Load(context.Background(), dir, []string{"data/app.yaml"}, func(string) string { return "" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	e := &env{db: db, set: set, tools: map[string]coachd.Tool{}}
	for _, tool := range set.Tools() {
		e.tools[tool.Definition().Name] = tool
	}
	e.before = e.dump(t)
	return e
}

var (
	alice = &coachd.User{ID: "usr_a", Name: "alice"}
	bob   = &coachd.User{ID: "usr_b", Name: "bob"}
)

// call runs a tool as u; a Go error fails the test (every refusal is a
// tool result).
func (e *env) call(t testing.TB, u *coachd.User, tool, input string) coachd.ToolResult {
	t.Helper()
	res, err := e.tools[tool].Execute(context.Background(), coachd.ToolCall{ID: "t1", Name: tool, Input: json.RawMessage(input)},
		coachd.ToolEnv{User: u})
	if err != nil {
		t.Fatalf("%s %s: %v", tool, input, err)
	}
	return res
}

// dump is every row of the app database, to show that nothing changed.
func (e *env) dump(t testing.TB) string {
	t.Helper()
	var sb strings.Builder
	for _, q := range []string{
		`SELECT id, user_id, title, city, rank, is_active, secret, note FROM events ORDER BY id`,
		`SELECT id, name, city FROM venues ORDER BY id`,
		`SELECT id, owner, name, created_at FROM zones ORDER BY id`,
		`SELECT count(*) FROM big`,
	} {
		rows, err := e.db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(&sb, vals...)
		}
		rows.Close()
	}
	return sb.String()
}

type rowsResult struct {
	Rows      []map[string]any `json:"rows"`
	Count     int              `json:"count"`
	Truncated bool             `json:"truncated"`
}

func mustRows(t *testing.T, res coachd.ToolResult) rowsResult {
	t.Helper()
	if res.IsError {
		t.Fatalf("error result: %s", res.Content)
	}
	var out rowsResult
	if err := json.Unmarshal([]byte(res.Content), &out); err != nil {
		t.Fatalf("%s: %v", res.Content, err)
	}
	return out
}

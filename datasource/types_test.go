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

// typed is a small app database per dialect whose columns have the
// types apps declare dates and times with.
var typed = []struct {
	name, driver string
	schema       string
	dsn          func(t testing.TB) (string, string) // the data file's dsn, the driver's
}{
	{"sqlite", "sqlite", `CREATE TABLE shifts (id TEXT PRIMARY KEY, user_id TEXT NOT NULL, title TEXT,
		day DATE, starts DATETIME, ends TIMESTAMP)`,
		func(t testing.TB) (string, string) {
			p := filepath.Join(t.TempDir(), "app.db")
			return "sqlite:" + p, p
		}},
	{"postgres", "pgx", `CREATE TABLE shifts (id TEXT PRIMARY KEY, user_id TEXT NOT NULL, title TEXT,
		day date, starts timestamp, ends timestamptz)`,
		func(t testing.TB) (string, string) {
			dsn := pgtest.NewDatabase(t)
			return dsn, dsn
		}},
}

const typedFile = `dsn: %s
user_key: name
tables:
  shifts:
    scope: user_id
    columns: [id, title, day, starts, ends]
actions:
  retitle:
    description: Retitle one of the user's shifts.
    table: shifts
    update:
      key: starts
      match: [{input: title, column: title, fuzzy: true}]
      set: {title: $new}
    input_schema: {type: object, properties: {title: {type: string}, new: {type: string}}}
`

// openTyped opens the typed database of one dialect with values inserted
// as the app writes them, and its data source.
func openTyped(t *testing.T, i int, values string) (map[string]coachd.Tool, *sql.DB) {
	t.Helper()
	dsn, driverDSN := typed[i].dsn(t)
	db, err := sql.Open(typed[i].driver, driverDSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for _, q := range []string{typed[i].schema, `INSERT INTO shifts VALUES ` + values} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	tools := loadTools(t, fmt.Sprintf(typedFile, dsn))
	return tools, db
}

// loadTools loads a pack whose one data file is file and returns its
// tools by name; the sources close when the test ends.
func loadTools(t *testing.T, file string) map[string]coachd.Tool {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "data"), 0o755)
	os.WriteFile(filepath.Join(dir, "data", "app.yaml"), []byte(file), 0o644)
	set, err := datasource.Load(context.Background(), dir, []string{"data/app.yaml"}, func(string) string { return "" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	tools := map[string]coachd.Tool{}
	for _, tool := range set.Tools() {
		tools[tool.Definition().Name] = tool
	}
	return tools
}

func callTool(t *testing.T, tools map[string]coachd.Tool, name, input string) coachd.ToolResult {
	t.Helper()
	res, err := tools[name].Execute(context.Background(), coachd.ToolCall{ID: "t1", Name: name, Input: json.RawMessage(input)},
		coachd.ToolEnv{User: alice})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestDateValues: a date is read back as the date the app stored, a
// time without a zone without one, and what query_data shows finds the
// row again; an update keyed by such a column changes the row.
func TestDateValues(t *testing.T) {
	cases := []struct {
		values string
		want   map[string]string
	}{
		// SQLite keeps dates as the app wrote them: they come back as text.
		{`('s1', 'alice', 'Late', '2026-01-05', '2026-01-05 19:30:00', '2026-01-05T19:30:00-06:00')`,
			map[string]string{"day": "2026-01-05", "starts": "2026-01-05 19:30:00", "ends": "2026-01-05T19:30:00-06:00"}},
		{`('s1', 'alice', 'Late', '2026-01-05', '2026-01-05 19:30:00.25', '2026-01-05T19:30:00-06:00')`,
			map[string]string{"day": "2026-01-05", "starts": "2026-01-05T19:30:00.25", "ends": "2026-01-06T01:30:00Z"}},
	}
	for i, c := range cases {
		t.Run(typed[i].name, func(t *testing.T) {
			tools, db := openTyped(t, i, c.values)
			got := mustRows(t, callTool(t, tools, "query_data", `{"table":"shifts"}`))
			if got.Count != 1 {
				t.Fatalf("rows: %+v", got)
			}
			for col, want := range c.want {
				if got.Rows[0][col] != want {
					t.Errorf("%s: got %v, want %q", col, got.Rows[0][col], want)
				}
				in, _ := json.Marshal(map[string]any{"table": "shifts", "where": map[string]any{col: got.Rows[0][col]}})
				if n := mustRows(t, callTool(t, tools, "query_data", string(in))).Count; n != 1 {
					t.Errorf("where %s = %v as shown: %d rows", col, got.Rows[0][col], n)
				}
			}
			res := callTool(t, tools, "retitle", `{"title":"late","new":"Early"}`)
			var out struct {
				RowsAffected int `json:"rows_affected"`
			}
			json.Unmarshal([]byte(res.Content), &out)
			var title string
			db.QueryRow(`SELECT title FROM shifts WHERE id = 's1'`).Scan(&title)
			if res.IsError || out.RowsAffected != 1 || title != "Early" {
				t.Errorf("retitle keyed by a timestamp: %s; title %q", res.Content, title)
			}
		})
	}
}

// TestPostgresValues: Postgres takes what SQLite's affinity takes by
// itself: a number for a text column (a code the model read as digits),
// 1 and 0 for a boolean, like on a column that is not text.
func TestPostgresValues(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`CREATE TABLE items (id TEXT PRIMARY KEY, user_id TEXT NOT NULL, code varchar(20), n integer, day date, note TEXT, active boolean, price numeric(8,2))`,
		`INSERT INTO items VALUES ('i1', 'alice', '123', 7, '2026-01-05', NULL, false, 12.50), ('i2', 'alice', '456', 8, '2026-02-05', NULL, true, 'NaN')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	tools := loadTools(t, `dsn: `+dsn+`
user_key: name
tables:
  items: {scope: user_id, columns: [id, code, n, day, active, price]}
queries:
  by_code:
    description: An item by its code.
    table: items
    where: {code: $code}
    input_schema: {type: object, properties: {code: {type: integer}}}
  active:
    description: The active items (written as SQLite apps write it).
    table: items
    where: {active: 1}
actions:
  annotate:
    description: Annotate an item named by its code.
    table: items
    update: {key: id, match: [{input: code, column: code, fuzzy: true}], set: {note: $note}}
    input_schema: {type: object, properties: {code: {type: integer}, note: {type: string}}}
`)
	// A numeric is a number, as it is on SQLite; NaN, which JSON has not,
	// stays text.
	got := mustRows(t, callTool(t, tools, "query_data", `{"table":"items","columns":["price"],"order_by":["id"]}`))
	if price, ok := got.Rows[0]["price"].(float64); !ok || price != 12.5 || got.Rows[1]["price"] != "NaN" {
		t.Errorf("numeric prices: %+v", got.Rows)
	}
	for _, c := range []struct{ tool, in, want string }{
		{"query_data", `{"table":"items","where":{"code":123}}`, "i1"},
		{"query_data", `{"table":"items","where":{"code":{"in":[123]}}}`, "i1"},
		{"query_data", `{"table":"items","where":{"n":{"like":"8"}}}`, "i2"},
		{"query_data", `{"table":"items","where":{"day":{"like":"2026-01"}}}`, "i1"},
		{"by_code", `{"code":456}`, "i2"},
		{"active", `{}`, "i2"},
		{"query_data", `{"table":"items","where":{"active":0}}`, "i1"},
		{"annotate", `{"code":456,"note":"checked"}`, "i2"},
	} {
		res := callTool(t, tools, c.tool, c.in)
		if res.IsError || !strings.Contains(res.Content, `"`+c.want+`"`) {
			t.Errorf("%s %s: %+v", c.tool, c.in, res)
		}
	}
}

// TestPostgresRequired: pack validate names the NOT NULL column without
// a default an insert leaves out (every call would fail), and not the
// columns Postgres fills itself.
func TestPostgresRequired(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE notes (id serial PRIMARY KEY, user_id text NOT NULL, title text NOT NULL,
		body text NOT NULL, made timestamptz NOT NULL DEFAULT now(), n int GENERATED ALWAYS AS IDENTITY, city text)`); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "data"), 0o755)
	os.WriteFile(filepath.Join(dir, "data", "app.yaml"), []byte(`dsn: `+dsn+`
tables:
  notes: {scope: user_id, columns: [id, title]}
actions:
  add_note:
    description: Add a note.
    table: notes
    insert: {city: $city, body: $body}
    input_schema: {type: object, properties: {city: {type: string}, body: {type: string}}}
`), 0o644)
	_, err = datasource.Load(context.Background(), dir, []string{"data/app.yaml"}, func(string) string { return "" }, nil)
	want := "data/app.yaml:5: action add_note: the insert does not set title, which is NOT NULL without a default"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// TestLikeAccents: like and loose matches find a name with a capital
// that is not ASCII, written as the row has it: SQLite's lower() folds
// ASCII only, so lowercasing both sides alone never matched "Élysée".
func TestLikeAccents(t *testing.T) {
	for i := range typed {
		t.Run(typed[i].name, func(t *testing.T) {
			tools, db := openTyped(t, i, `('s1', 'alice', 'Élysée Montmartre', NULL, '2026-01-05 19:30:00', NULL),
				('s2', 'alice', 'Zénith', NULL, '2026-01-06 19:30:00', NULL)`)
			for _, q := range []string{"Élysée", "Élysée Mont", "Montmartre"} {
				in := `{"table":"shifts","where":{"title":{"like":"` + q + `"}}}`
				if got := mustRows(t, callTool(t, tools, "query_data", in)); got.Count != 1 {
					t.Errorf("like %q: %+v", q, got)
				}
			}
			res := callTool(t, tools, "retitle", `{"title":"Élysée","new":"Olympia"}`)
			var title string
			db.QueryRow(`SELECT title FROM shifts WHERE id = 's1'`).Scan(&title)
			if res.IsError || title != "Olympia" {
				t.Errorf("retitle Élysée: %+v; title %q", res, title)
			}
		})
	}
}

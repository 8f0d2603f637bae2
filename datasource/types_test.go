package datasource_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "data"), 0o755)
	os.WriteFile(filepath.Join(dir, "data", "app.yaml"), []byte(fmt.Sprintf(typedFile, dsn)), 0o644)
	set, err := datasource.Load(context.Background(), dir, []string{"data/app.yaml"}, func(string) string { return "" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	tools := map[string]coachd.Tool{}
	for _, tool := range set.Tools() {
		tools[tool.Definition().Name] = tool
	}
	return tools, db
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

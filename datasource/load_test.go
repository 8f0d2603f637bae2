package datasource_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/datasource"
)

// TestLoadProblems: a bad declaration is reported with file:line, every
// problem at once, and opens nothing.
func TestLoadProblems(t *testing.T) {
	dsn, _ := backends[0].open(t)
	cases := []struct {
		name, file string
		want       []string
	}{
		{"UnknownTableAndColumn", `dsn: ` + dsn + `
tables:
  nope:
    shared: true
    columns: [id]
  events:
    scope: user_id
    columns: [id, titel]
`, []string{"data/app.yaml:3: table nope is not in the database", "data/app.yaml:8: table events has no column titel"}},
		{"WriteWithoutScope", `dsn: ` + dsn + `
tables:
  venues: {shared: true, columns: [id, name]}
actions:
  rename:
    description: Rename a venue.
    table: venues
    update: {key: id, match: [{input: id, column: id}], set: {name: $name}}
    input_schema: {type: object, properties: {id: {type: string}, name: {type: string}}}
`, []string{"data/app.yaml:5: action rename: a write needs a user scope"}},
		{"ScopeColumnAndRefs", `dsn: ` + dsn + `
tables:
  zones: {shared: true, scope: owner, columns: [id, name]}
actions:
  add:
    description: Add a zone.
    table: zones
    insert: {owner: bob, name: $nme, colour: red}
    input_schema: {type: object, properties: {name: {type: string}}}
`, []string{"data/app.yaml:8: action add: coachd sets the scope column owner itself",
			"data/app.yaml:8: action add: $nme is not a property of its input_schema",
			"data/app.yaml:8: action add: table zones has no column colour"}},
		{"NoScopeDeclared", `dsn: ` + dsn + `
tables:
  events: {columns: [id]}
`, []string{"data/app.yaml:3: table events: give the column that scopes rows to the user"}},
		{"DSN", `dsn: sqlite:missing.db
tables:
  events: {scope: user_id, columns: [id]}
`, []string{"data/app.yaml:1: dsn: cannot open missing.db read-only"}},
		{"DSNScheme", `dsn: mysql://x
tables:
  events: {scope: user_id, columns: [id]}
`, []string{"data/app.yaml:1: dsn must start with sqlite:, file: or postgres://"}},
		{"MissingEnv", `dsn: ${APP_DB}
tables:
  events: {scope: user_id, columns: [id]}
`, []string{"data/app.yaml:1: dsn: environment variable APP_DB is not set"}},
		{"Keys", `dsn: ` + dsn + `
user_key: email
max_rows: 100000
sql: SELECT 1
tables:
  events: {scope: user_id, columns: ["id; DROP TABLE events"]}
`, []string{"data/app.yaml:2: user_key must be id, name or subject", "data/app.yaml:3: max_rows must be 1 to 500",
			`data/app.yaml:4: unknown key "sql"`, `data/app.yaml:6: column "id; DROP TABLE events": not a plain SQL name`}},
		{"InsertMissesRequired", `dsn: ` + dsn + `
tables:
  events: {scope: user_id, columns: [id, title]}
  big: {scope: user_id, columns: [id]}
actions:
  add_event:
    description: Add an event.
    table: events
    insert: {city: $city}
    input_schema: {type: object, properties: {city: {type: string}}}
  add_big:
    description: Add a row (its INTEGER PRIMARY KEY is assigned).
    table: big
    insert: {body: $body}
    input_schema: {type: object, properties: {body: {type: string}}}
`, []string{"data/app.yaml:6: action add_event: the insert does not set title, which is NOT NULL without a default"}},
		{"NowIntoInteger", `dsn: ` + dsn + `
tables:
  events: {scope: user_id, columns: [id, title]}
actions:
  add_event:
    description: Add an event.
    table: events
    insert: {id: $uuid, title: $title, rank: $now}
    input_schema: {type: object, properties: {title: {type: string}}}
  bump:
    description: Bump an event.
    table: events
    update: {key: id, match: [{input: id, column: id}], set: {rank: $uuid}}
    input_schema: {type: object, properties: {id: {type: string}}}
`, []string{"data/app.yaml:8: action add_event: rank is integer: $now writes a timestamp as text",
			"data/app.yaml:13: action bump: rank is integer: $uuid writes a UUID as text"}},
		{"ActionShape", `dsn: ` + dsn + `
tables:
  events: {scope: user_id, columns: [id, title]}
actions:
  edit:
    description: Edit an event.
    table: events
    insert: {title: $title}
    update:
      key: id
      match: [{input: title, column: title, fuzy: true}]
      set: {title: $title}
    input_schema: {type: object, properties: {title: {type: string}}}
`, []string{"data/app.yaml:9: action edit: give insert or update, not both",
			`data/app.yaml:11: match: unknown key "fuzy"`}},
		{"QueryLimitAndShared", `dsn: ` + dsn + `
tables:
  venues: {shared: True, columns: [id, name]}
  zones: {shared: yes, columns: [id, name]}
  events: {shared: maybe, scope: user_id, columns: [id]}
queries:
  top:
    description: The top venues.
    table: venues
    limit: ten
  none:
    description: No venue.
    table: venues
    limit: 0
`, []string{"data/app.yaml:5: shared must be true or false", "data/app.yaml:10: query top: limit must be 1 to max_rows",
			"data/app.yaml:14: query none: limit must be 1 to max_rows"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			os.MkdirAll(filepath.Join(dir, "data"), 0o755)
			os.WriteFile(filepath.Join(dir, "data", "app.yaml"), []byte(c.file), 0o644)
			_, err := datasource.Load(context.Background(), dir, []string{"data/app.yaml"}, func(string) string { return "" }, nil)
			if err == nil {
				t.Fatal("loaded")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("missing %q in:\n%v", w, err)
				}
			}
		})
	}
}

// TestSchemaPrompt: the prompt section comes from the declaration and
// the database's own types, and stays inside its budget.
func TestSchemaPrompt(t *testing.T) {
	e := openEnv(t, backends[0])
	p := e.set.Prompt(4000)
	for _, want := range []string{"- events (per user): id text, title text, city text, rank integer, is_active integer",
		"- venues (shared)", "active_events: Active events", "deactivate / DEACTIVATE (update events)", "add_zone / ADD_ZONE (insert zones)"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
	if strings.Contains(p, "secret") {
		t.Errorf("the prompt shows an undeclared column:\n%s", p)
	}
	for _, budget := range []int{len(p) - 1, 600, 450} {
		small := e.set.Prompt(budget)
		if len(small) > budget || small == "" {
			t.Errorf("budget %d: %d bytes", budget, len(small))
		}
	}
	if small := e.set.Prompt(len(p) - 1); strings.Contains(small, " text") {
		t.Errorf("a tight budget keeps the types:\n%s", small)
	}
	sc := e.set.Schema()
	if got := fmt.Sprintln(sc.Tables[0].Access, sc.Tables[2].Access, sc.Tables[2].Scope); got != "read_write read_write owner\n" {
		t.Errorf("access: %s", got)
	}
}

// TestSchemaStable: GET /v1/schema lists a table's columns in the same
// order every time, those only actions write included.
func TestSchemaStable(t *testing.T) {
	dsn, _ := backends[0].open(t)
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "data"), 0o755)
	os.WriteFile(filepath.Join(dir, "data", "app.yaml"), []byte(`dsn: `+dsn+`
tables:
  events: {scope: user_id, columns: [id]}
actions:
  edit:
    description: Edit an event.
    table: events
    update:
      key: id
      match: [{input: id, column: id}]
      set: {title: $title, city: $city, rank: $rank, is_active: 1, secret: x, note: $note}
    input_schema: {type: object, properties: {id: {type: string}, title: {type: string}, city: {type: string}, rank: {type: integer}, note: {type: string}}}
`), 0o644)
	set, err := datasource.Load(context.Background(), dir, []string{"data/app.yaml"}, func(string) string { return "" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	first := fmt.Sprint(set.Schema().Tables[0].Columns)
	for range 20 {
		if got := fmt.Sprint(set.Schema().Tables[0].Columns); got != first {
			t.Fatalf("columns in another order:\n%s\n%s", first, got)
		}
	}
}

// TestDSNSecret: a Postgres URL written after sqlite: (what
// dsn: sqlite:${APP_DB} becomes when APP_DB is a postgres:// URL) is
// reported as such, and its password is not printed.
func TestDSNSecret(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "data"), 0o755)
	os.WriteFile(filepath.Join(dir, "data", "app.yaml"), []byte("dsn: sqlite:${APP_DB}\ntables:\n  events: {scope: user_id, columns: [id]}\n"), 0o644)
	for _, db := range []string{"postgres://app:s3cret@db.internal", "postgres://app:s3cret@db.internal:5432/app",
		"app:s3cret@db.internal:5432/app", "app:s3cret@db.internal"} { // a URL without its scheme
		_, err := datasource.Load(context.Background(), dir, []string{"data/app.yaml"}, func(string) string { return db }, nil)
		if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "data/app.yaml:1: dsn: ") ||
			!strings.Contains(err.Error(), "postgres://") {
			t.Errorf("%s: %v", db, err)
		}
	}
}

package datasource_test

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
)

const partialFile = `dsn: %s
user_key: name
tables:
  events: {scope: user_id, columns: [id, title, city, rank, is_active]}
actions:
  edit_event:
    description: Change the city or the rank of one of the user's events.
    table: events
    update:
      key: id
      match: [{input: id, column: id}]
      set: {city: $city, rank: $rank}
    input_schema:
      type: object
      properties: {id: {type: string}, city: {type: [string, "null"]}, rank: {type: integer}}
  add_event:
    description: Add an event.
    table: events
    insert: {id: $uuid, title: $title, is_active: $active}
    input_schema:
      type: object
      properties: {title: {type: string}, active: {type: integer}}
`

// TestPartialInput: an input field that is not given leaves its column
// alone, as it leaves a named query's condition out: an update keeps
// what the model did not mention, an insert lets the column's default
// apply; an explicit null still clears.
func TestPartialInput(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			dsn, db := b.open(t)
			tools := loadTools(t, strings.Replace(partialFile, "%s", dsn, 1))
			if res := callTool(t, tools, "edit_event", `{"id":"a2","rank":9}`); res.IsError {
				t.Fatalf("edit rank: %+v", res)
			}
			var city *string
			var rank int
			db.QueryRow(`SELECT city, rank FROM events WHERE id = 'a2'`).Scan(&city, &rank)
			if city == nil || *city != "Dallas" || rank != 9 {
				t.Errorf("after editing the rank: city %v, rank %d (want Dallas, 9)", city, rank)
			}
			if res := callTool(t, tools, "edit_event", `{"id":"a2","city":null}`); res.IsError {
				t.Fatalf("clear city: %+v", res)
			}
			db.QueryRow(`SELECT city, rank FROM events WHERE id = 'a2'`).Scan(&city, &rank)
			if city != nil || rank != 9 {
				t.Errorf("after clearing the city: city %v, rank %d (want NULL, 9)", city, rank)
			}
			if res := callTool(t, tools, "edit_event", `{"id":"a2"}`); !res.IsError {
				t.Errorf("an edit that changes nothing: %+v", res)
			}
			if res := callTool(t, tools, "add_event", `{"title":"Parade"}`); res.IsError {
				t.Errorf("insert without the optional field: %+v", res)
			}
			var active int
			db.QueryRow(`SELECT is_active FROM events WHERE title = 'Parade'`).Scan(&active)
			if active != 1 {
				t.Errorf("is_active of the new event: %d, want the column's default 1", active)
			}
		})
	}
}

// TestBinaryKey: an update keyed by a BLOB (a UUID stored as 16 bytes)
// writes the row it found, though the row is shown summarised.
func TestBinaryKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`CREATE TABLE tags (id BLOB PRIMARY KEY, user_id TEXT NOT NULL, name TEXT NOT NULL, color TEXT)`,
		`INSERT INTO tags VALUES (x'8f14e45fceea167a5a36dedd4bea2543', 'alice', 'Airport runs', 'red')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	tools := loadTools(t, `dsn: sqlite:`+path+`
user_key: name
tables:
  tags: {scope: user_id, columns: [name, color]}
actions:
  recolor:
    description: Recolor one of the user's tags.
    table: tags
    update: {key: id, match: [{input: name, column: name, fuzzy: true}], set: {color: $color}}
    input_schema: {type: object, properties: {name: {type: string}, color: {type: string}}}
`)
	res := callTool(t, tools, "recolor", `{"name":"airport","color":"blue"}`)
	var color string
	db.QueryRow(`SELECT color FROM tags`).Scan(&color)
	if res.IsError || color != "blue" {
		t.Errorf("recolor: %+v; color %q", res, color)
	}
}

// TestRefusalNamed: when the app's database refuses a write, the result
// says which constraint and columns, so the model can fix its call.
func TestRefusalNamed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE zone_intelligence (id TEXT PRIMARY KEY, reported_by TEXT NOT NULL,
		market_slug TEXT NOT NULL, zone_name TEXT NOT NULL, UNIQUE (market_slug, zone_name))`); err != nil {
		t.Fatal(err)
	}
	tools := loadTools(t, `dsn: sqlite:`+path+`
user_key: name
tables:
  zone_intelligence: {shared: true, scope: reported_by, columns: [zone_name]}
actions:
  zone_intel:
    description: Add a zone.
    table: zone_intelligence
    insert: {id: $uuid, market_slug: $market_slug, zone_name: $zone_name}
    input_schema: {type: object, properties: {market_slug: {type: string}, zone_name: {type: string}}}
`)
	in := `{"market_slug":"dallas-tx","zone_name":"Deep Ellum"}`
	if res := callTool(t, tools, "zone_intel", in); res.IsError {
		t.Fatalf("first: %+v", res)
	}
	res := callTool(t, tools, "zone_intel", in)
	if !res.IsError || !strings.Contains(res.Content, "zone_intelligence.market_slug, zone_intelligence.zone_name") {
		t.Errorf("refusal: %+v", res)
	}
}

// TestUpdateOneRow: an update changes the one row match names; a key
// that is not unique (city) would change others too, so nothing is
// written.
func TestUpdateOneRow(t *testing.T) {
	dsn, db := backends[0].open(t)
	tools := loadTools(t, `dsn: `+dsn+`
user_key: name
tables:
  events: {scope: user_id, columns: [id, title, city]}
actions:
  rank_event:
    description: Rank one of the user's events.
    table: events
    update: {key: city, match: [{input: title, column: title}], set: {rank: $rank}}
    input_schema: {type: object, properties: {title: {type: string}, rank: {type: integer}}}
`)
	res := callTool(t, tools, "rank_event", `{"title":"Jazz Concert","rank":9}`)
	var n int
	db.QueryRow(`SELECT count(*) FROM events WHERE rank = 9`).Scan(&n)
	if !res.IsError || n != 0 {
		t.Errorf("an update by a key three rows share: %+v; %d rows changed", res, n)
	}
}

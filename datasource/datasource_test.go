package datasource_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/datasource"
)

func TestDataSource(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			e := openEnv(t, b)
			t.Run("Scope", func(t *testing.T) { testScope(t, e) })
			t.Run("Injection", func(t *testing.T) { testInjection(t, e) })
			t.Run("Caps", func(t *testing.T) { testCaps(t, e) })
			t.Run("NamedQuery", func(t *testing.T) { testNamedQuery(t, e) })
			t.Run("Actions", func(t *testing.T) { testActions(t, e) })
		})
	}
}

// testScope: a user reads their own rows of a per-user table, every row
// of a shared one, and never another user's.
func testScope(t *testing.T, e *env) {
	got := mustRows(t, e.call(t, alice, "query_data", `{"table":"events","order_by":["id"]}`))
	if got.Count != 4 || got.Rows[0]["id"] != "a1" || got.Rows[3]["id"] != "a4" {
		t.Errorf("alice's events: %+v", got)
	}
	got = mustRows(t, e.call(t, bob, "query_data", `{"table":"events","where":{"title":"Taylor Swift Concert"}}`))
	if got.Count != 1 || got.Rows[0]["id"] != "b1" {
		t.Errorf("bob's concert: %+v", got)
	}
	// The scope column is readable in big: asking for another user's
	// rows through it still reads only one's own.
	got = mustRows(t, e.call(t, bob, "query_data", `{"table":"big","where":{"user_id":"alice"}}`))
	if got.Count != 0 {
		t.Errorf("bob read alice's rows by naming her: %d rows", got.Count)
	}
	got = mustRows(t, e.call(t, bob, "query_data", `{"table":"venues"}`))
	if got.Count != 2 {
		t.Errorf("shared venues: %+v", got)
	}
	// A user the data source cannot scope reads nothing.
	res := e.call(t, nil, "query_data", `{"table":"events"}`)
	if !res.IsError || !strings.Contains(res.Content, "not linked") {
		t.Errorf("unlinked user: %+v", res)
	}
}

// injection is query_data input that must neither change the database
// nor read outside alice's rows and declared columns.
var injection = []string{
	`{"table":"events; DROP TABLE events"}`,
	`{"table":"events\" --"}`,
	`{"table":"sqlite_master"}`,
	`{"table":"pg_catalog.pg_user"}`,
	`{"table":"events","columns":["title FROM events; --"]}`,
	`{"table":"events","columns":["secret"]}`,
	`{"table":"events","columns":["*"]}`,
	`{"table":"events","columns":["title\", \"secret"]}`,
	`{"table":"events","where":{"title":"' OR '1'='1"}}`,
	`{"table":"events","where":{"title":"x' UNION SELECT id, secret, city, rank, is_active FROM events --"}}`,
	`{"table":"events","where":{"title":"x'; DELETE FROM events; --"}}`,
	`{"table":"events","where":{"title":"/* comment */ OR 1=1"}}`,
	`{"table":"events","where":{"id":"1; UPDATE events SET is_active = 0"}}`,
	`{"table":"events","where":{"user_id":"bob"}}`,
	`{"table":"events","where":{"1=1 OR user_id":"bob"}}`,
	`{"table":"events","where":{"title\" = title OR \"title":"x"}}`,
	`{"table":"events","where":{"secret":"BOBSECRET"}}`,
	`{"table":"events","where":{"title":{"like":"%"}}}`,
	`{"table":"events","where":{"title":{"like":"_"}}}`,
	`{"table":"events","where":{"title":{"like":"%' OR '1'='1"}}}`,
	`{"table":"events","where":{"title":{"in":["a","b') OR ('1'='1"]}}}`,
	`{"table":"events","where":{"title":{"in":[{"x":1}]}}}`,
	`{"table":"events","where":{"title":{"$ne":null}}}`,
	`{"table":"events","where":{"title":{"= '' OR 1=1 --":"x"}}}`,
	`{"table":"events","where":{"title":{"=":"a","!=":"b"}}}`,
	`{"table":"events","where":{"title":{"x":1}}}`,
	`{"table":"events","where":{"title":["a","b"]}}`,
	`{"table":"events","where":{"title":"{\"$ne\":null}"}}`,
	`{"table":"events","where":{"rank":{">":"0 OR 1=1"}}}`,
	`{"table":"events","where":{"rank":1e400}}`,
	`{"table":"events","where":{"title":"x\u0000' OR 1=1"}}`,
	`{"table":"events","where":"1=1"}`,
	`{"table":"events","where":[["title","=","x"]]}`,
	`{"table":"events","order_by":["title; DROP TABLE events"]}`,
	`{"table":"events","order_by":["(SELECT secret FROM events)"]}`,
	`{"table":"events","order_by":["-title DESC, (SELECT 1)"]}`,
	`{"table":"events","order_by":["secret"]}`,
	`{"table":"events","limit":-1}`,
	`{"table":"events","limit":"1; DROP TABLE events"}`,
	`{"table":"events","limit":1000000}`,
	`"events"`,
	`[]`,
	`{}`,
}

func testInjection(t *testing.T, e *env) {
	before := e.dump(t)
	for _, in := range injection {
		res := e.call(t, alice, "query_data", in)
		for _, leak := range []string{"BOBSECRET", "alice-secret", "Bob Private", "b1", "b2"} {
			if strings.Contains(res.Content, leak) {
				t.Errorf("%s read %q: %s", in, leak, res.Content)
			}
		}
		if !res.IsError {
			var got rowsResult
			if err := json.Unmarshal([]byte(res.Content), &got); err != nil {
				t.Errorf("%s: %s", in, res.Content)
			}
			if got.Count > 4 {
				t.Errorf("%s: %d rows for a user with 4", in, got.Count)
			}
		}
	}
	// Named query and action input get the same treatment.
	for _, in := range []string{
		`{"city":"x' OR '1'='1"}`, `{"city":{"$ne":null}}`, `{"city":["Dallas","Plano"]}`,
	} {
		res := e.call(t, alice, "active_events", in)
		if strings.Contains(res.Content, "b1") || strings.Contains(res.Content, "Bob") {
			t.Errorf("active_events %s: %s", in, res.Content)
		}
	}
	for _, in := range []string{
		`{"title":"' OR '1'='1"}`, `{"title":"%%"}`, `{"title":"__"}`, `{"title":"%_"}`, `{"id":"b1' OR '1'='1"}`,
		`{"title":"Bob Private Party"}`, `{"id":"b2"}`, `{"title":{"like":"%"}}`,
	} {
		res := e.call(t, alice, "deactivate", in)
		if !res.IsError {
			t.Errorf("deactivate %s: %s", in, res.Content)
		}
	}
	if after := e.dump(t); after != before {
		t.Errorf("the corpus changed the database:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// testCaps: the row cap, the result size cap and the time cap hold.
func testCaps(t *testing.T, e *env) {
	got := mustRows(t, e.call(t, alice, "query_data", `{"table":"big","columns":["id"],"limit":1000}`))
	if got.Count != 20 || !got.Truncated {
		t.Errorf("row cap 20: %d rows, truncated %v", got.Count, got.Truncated)
	}
	res := e.call(t, alice, "query_data", `{"table":"big"}`)
	got = mustRows(t, res)
	if len(res.Content) > 32<<10 || !got.Truncated || got.Count == 0 {
		t.Errorf("size cap: %d bytes, %d rows, truncated %v", len(res.Content), got.Count, got.Truncated)
	}
	if body, _ := got.Rows[0]["body"].(string); len(body) > 2010 {
		t.Errorf("a 5000-byte cell came back with %d bytes", len(body))
	}
	res = e.call(t, alice, "query_data", `{"table":"slow"}`)
	if !res.IsError || !strings.Contains(res.Content, "time limit") {
		t.Errorf("time cap: %+v", res)
	}
}

func testNamedQuery(t *testing.T, e *env) {
	got := mustRows(t, e.call(t, alice, "active_events", `{}`))
	if got.Count != 4 || got.Rows[0]["title"] != "100% Fun_Run" {
		t.Errorf("active events: %+v", got)
	}
	got = mustRows(t, e.call(t, alice, "active_events", `{"city":"Arlington"}`))
	if got.Count != 1 || got.Rows[0]["id"] != "a1" {
		t.Errorf("active events in Arlington: %+v", got)
	}
}

// testActions: an update finds the user's row by id or loosely by title,
// lists candidates when the title is ambiguous, never touches another
// user's row; an insert carries the user's key.
func testActions(t *testing.T, e *env) {
	res := e.call(t, alice, "deactivate", `{"title":"concert"}`)
	if !res.IsError || !strings.Contains(res.Content, "Jazz Concert") || !strings.Contains(res.Content, "Taylor Swift Concert") {
		t.Errorf("ambiguous title: %+v", res)
	}
	res = e.call(t, alice, "deactivate", `{"title":"taylor swift", "note":"ended"}`)
	if res.IsError || !strings.Contains(res.Content, `"rows_affected":1`) || !strings.Contains(res.Content, `"a1"`) {
		t.Fatalf("deactivate: %+v", res)
	}
	var active, bobActive int
	e.db.QueryRow(`SELECT is_active FROM events WHERE id = 'a1'`).Scan(&active)
	e.db.QueryRow(`SELECT is_active FROM events WHERE id = 'b1'`).Scan(&bobActive)
	if active != 0 || bobActive != 1 {
		t.Errorf("after deactivate: alice's %d (want 0), bob's %d (want 1)", active, bobActive)
	}
	// The declared where (is_active = 1) now excludes it.
	res = e.call(t, alice, "deactivate", `{"id":"a1"}`)
	if !res.IsError || !strings.Contains(res.Content, "no row") {
		t.Errorf("deactivate twice: %+v", res)
	}
	res = e.call(t, alice, "deactivate", `{"title":"100% Fun_Run"}`)
	if res.IsError {
		t.Errorf("exact title with LIKE wildcards in it: %+v", res)
	}
	// Exact is exact case aside (README), for a match that is not fuzzy too.
	res = e.call(t, alice, "deactivate", `{"id":"A3"}`)
	if res.IsError || !strings.Contains(res.Content, `"a3"`) {
		t.Errorf("deactivate by id in other case: %+v", res)
	}
	res = e.call(t, alice, "deactivate", `{"note":"which?"}`)
	if !res.IsError || !strings.Contains(res.Content, "id, title") {
		t.Errorf("no row named: %+v", res)
	}
	name := `x'); DROP TABLE zones; --`
	in, _ := json.Marshal(map[string]string{"name": name})
	res = e.call(t, alice, "add_zone", string(in))
	if res.IsError {
		t.Fatalf("add_zone: %+v", res)
	}
	var owner, created string
	if err := e.db.QueryRow(`SELECT owner, created_at FROM zones WHERE name = `+ph(e), name).Scan(&owner, &created); err != nil {
		t.Fatal(err)
	}
	if owner != "alice" || created == "" {
		t.Errorf("zone row: owner %q created %q", owner, created)
	}
	res = e.call(t, nil, "add_zone", `{"name":"x"}`)
	if !res.IsError {
		t.Errorf("unlinked insert: %+v", res)
	}
}

func ph(e *env) string {
	if isPostgres(e) {
		return "$1"
	}
	return "?"
}

func isPostgres(e *env) bool {
	var v string
	return e.db.QueryRow(`SELECT version()`).Scan(&v) == nil
}

// TestReadOnly: the connection reads run on cannot write, whatever
// statement reached it.
func TestReadOnly(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			e := openEnv(t, b)
			before := e.dump(t)
			for _, stmt := range []string{`DELETE FROM events`, `UPDATE events SET is_active = 0`,
				`INSERT INTO venues VALUES ('v9', 'x', 'y')`, `DROP TABLE venues`, `CREATE TABLE t (x INTEGER)`} {
				if err := datasource.ExecReadOnly(e.set, stmt); err == nil {
					t.Errorf("%s: ran on the read-only connection", stmt)
				}
			}
			if e.dump(t) != before {
				t.Error("the database changed")
			}
		})
	}
}

// TestUpdateRace: an update whose row stops matching between the lookup
// and the write (another transaction deactivated it meanwhile) reports
// that nothing was written, never ok.
func TestUpdateRace(t *testing.T) {
	e := openEnv(t, backends[1])
	tx, err := e.db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`UPDATE events SET is_active = 0 WHERE id = 'a2'`); err != nil {
		t.Fatal(err)
	}
	done := make(chan coachd.ToolResult, 1)
	go func() {
		res, _ := e.tools["deactivate"].Execute(context.Background(), coachd.ToolCall{ID: "t1", Name: "deactivate",
			Input: json.RawMessage(`{"id":"a2"}`)}, coachd.ToolEnv{User: alice})
		done <- res
	}()
	// The action's UPDATE waits for the row lock the open transaction holds.
	for waiting := 0; waiting == 0; {
		if err := e.db.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
			AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		select {
		case res := <-done:
			t.Fatalf("the action did not wait for the lock: %+v", res)
		default:
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if !res.IsError || !strings.Contains(res.Content, "changed meanwhile") {
		t.Errorf("an update that wrote no row: %+v", res)
	}
}

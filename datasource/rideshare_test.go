package datasource_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/datasource"
)

// TestRideshareSeedTables: seed 001's coach reads briefings (events,
// traffic, news, weather) and ranking_candidates (venue
// recommendations) besides the other tables (lines 70-84), and its
// DEACTIVATE_NEWS hides a briefing's news item, which the coach must be
// able to read to name. examples/rideshare declares both, scoped to the
// driver.
func TestRideshareSeedTables(t *testing.T) {
	set := loadRideshare(t)
	want := map[string][]string{
		"briefings":          {"id", "snapshot_id", "events", "traffic", "news", "weather"},
		"ranking_candidates": {"id", "snapshot_id", "venue_name", "rank", "features"},
	}
	for _, tb := range set.Schema().Tables {
		cols, ok := want[tb.Name]
		if !ok {
			continue
		}
		delete(want, tb.Name)
		if tb.Shared || tb.Scope != "user_id" {
			t.Errorf("%s: shared %v, scope %q; want the driver's rows only", tb.Name, tb.Shared, tb.Scope)
		}
		for _, c := range cols {
			found := false
			for _, dc := range tb.Columns {
				found = found || dc.Name == c && dc.Read
			}
			if !found {
				t.Errorf("%s: column %s not readable", tb.Name, c)
			}
		}
	}
	if len(want) > 0 {
		t.Fatalf("tables the seed's coach reads are not declared: %v", want)
	}
	var query coachd.Tool
	for _, tl := range set.Tools() {
		if tl.Definition().Name == "query_data" {
			query = tl
		}
	}
	res, err := query.Execute(context.Background(), coachd.ToolCall{ID: "t1", Name: "query_data", Input: json.RawMessage(`{"table":"briefings","columns":["news"]}`)},
		coachd.ToolEnv{User: &coachd.User{ID: "usr_1", Name: "demo"}})
	if err != nil || res.IsError || !strings.Contains(res.Content, "I-35") || strings.Contains(res.Content, "Fort Worth") {
		t.Fatalf("demo's briefing news: %v %+v", err, res)
	}
}

// TestRideshareUpdateNamesItsRow: DEACTIVATE_EVENT names its row by
// event_id or event_title, each optional in the schema (the API refuses
// a top-level anyOf); validation refuses one with neither, as running it
// would, so seed 001's POST /v1/validate says so before the app acts.
func TestRideshareUpdateNamesItsRow(t *testing.T) {
	ts, err := agent.NewToolset(loadRideshare(t).Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	err = ts.ValidateInput("deactivate_event", json.RawMessage(`{"reason":"event_ended"}`))
	e := coachd.AsError(err)
	if err == nil || e.Code != coachd.EINVALID || len(e.Details) != 2 || e.Details[0].Field != "event_id" || e.Details[1].Field != "event_title" {
		t.Fatalf("neither event_id nor event_title: %v %+v", err, e)
	}
	for _, ok := range []string{`{"reason":"event_ended","event_title":"Taylor Swift"}`, `{"reason":"event_ended","event_id":"e7a0b1c2-0000-4000-8000-000000000001"}`} {
		if err := ts.ValidateInput("deactivate_event", json.RawMessage(ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

// loadRideshare loads examples/rideshare's data source over its sample
// database, built as its mkdb script builds it.
func loadRideshare(t *testing.T) *datasource.Set {
	t.Helper()
	dir := filepath.Join("..", "examples", "rideshare")
	schema, err := os.ReadFile(filepath.Join(dir, "data", "rideshare.sql"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "rideshare.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(string(schema)); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"RIDESHARE_DB": path}
	set, err := datasource.Load(context.Background(), dir, []string{"data/rideshare.yaml"}, func(k string) string { return env[k] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	return set
}

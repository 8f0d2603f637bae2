package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/server"
	"github.com/santhosh-tekuri/jsonschema/v6"
	_ "modernc.org/sqlite"
)

var rideshareDir = filepath.Join("..", "..", "examples", "rideshare")

// buildRideshareDB builds the rideshare pack's sample database the way
// its mkdb script does (the pack's SQL on a new SQLite file) and returns
// its path and a handle to inspect it.
func buildRideshareDB(t *testing.T) (string, *sql.DB) {
	t.Helper()
	schema, err := os.ReadFile(filepath.Join(rideshareDir, "data", "rideshare.sql"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "rideshare.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(string(schema)); err != nil {
		t.Fatal(err)
	}
	return path, db
}

// TestRideshareData plays examples/rideshare end to end through the real
// binary: the coach reads the driver's latest snapshot and events with
// query_data, deactivates an event with an action tag, the change is in
// the app's database, and the other driver's same-named event is not.
func TestRideshareData(t *testing.T) {
	dbPath, db := buildRideshareDB(t)
	fake := anthropictest.NewServer()
	defer fake.Close()
	p := MustStart(t, []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + fake.URL(), "RIDESHARE_DB=" + dbPath},
		"--db", filepath.Join(t.TempDir(), "c.db"), "--pack", rideshareDir, "--demo")

	get := func(path string) map[string]any {
		t.Helper()
		req, _ := http.NewRequest("GET", p.url+path, nil)
		req.Header.Set("Authorization", "Bearer "+p.key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
		}
		return out
	}
	t.Run("Schema", func(t *testing.T) {
		sc, _ := json.Marshal(get("/v1/schema"))
		mustMatchOpenAPI(t, "#/components/schemas/DataSchema", sc)
		for _, want := range []string{`"name":"discovered_events"`, `"access":"read_write"`, `"scope":"user_id"`,
			`"name":"title","read":true,"type":"text","write":false`, `"tag":"DEACTIVATE_EVENT"`, `"name":"latest_snapshot"`} {
			if !strings.Contains(string(sc), want) {
				t.Errorf("/v1/schema lacks %s:\n%s", want, sc)
			}
		}
		tables, _ := json.Marshal(get("/v1/schema/tables"))
		if !strings.Contains(string(tables), `{"access":"read","columns":["venue_id","venue_name","city","expense_rank","opening_hours"],"name":"venue_catalog","shared":true}`) {
			t.Errorf("/v1/schema/tables: %s", tables)
		}
		prompt, _ := get("/v1/schema/prompt")["prompt"].(string)
		if !strings.Contains(prompt, "- snapshots (per user): id text, city text") || len(prompt) > 4000 {
			t.Errorf("/v1/schema/prompt (%d bytes):\n%s", len(prompt), prompt)
		}
	})

	fake.Enqueue(anthropictest.Blocks(
		anthropictest.ToolUse("toolu_1", "latest_snapshot", `{}`),
		anthropictest.ToolUse("toolu_2", "query_data", `{"table":"discovered_events","columns":["title","city","is_active"],"where":{"city":{"in":["Arlington","Dallas"]}}}`),
	))
	fake.Enqueue(anthropictest.Text("Light rain in Dallas: surge downtown. The Taylor Swift show is over, so I took it off your list.\n"+
		`[DEACTIVATE_EVENT: {"event_title": "taylor swift", "reason": "event_ended", "notes": "Finished at 11pm"}]`, 16))
	req, _ := http.NewRequest("POST", p.url+"/v1/chat/stream", strings.NewReader(`{"message":"Where should I drive tonight?"}`))
	req.Header.Set("Authorization", "Bearer "+p.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	stream, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(stream), "event: message_end") || strings.Contains(string(stream), "DEACTIVATE_EVENT") {
		t.Fatalf("stream:\n%s", stream)
	}
	// What the model was given back: the demo driver's rows only.
	reqs := fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests", len(reqs))
	}
	var results []string
	for _, b := range reqs[1].ToolResults() {
		var s string
		json.Unmarshal(b.Content, &s)
		results = append(results, s)
	}
	if len(results) != 2 || !strings.Contains(results[0], `"weather":"light rain, 18C"`) || strings.Contains(results[0], "Fort Worth") {
		t.Errorf("latest_snapshot result: %q", results)
	}
	if len(results) == 2 && (strings.Count(results[1], `"title"`) != 4 || !strings.Contains(results[1], `"count":4`)) {
		t.Errorf("events result (4 of the demo driver's, none of maria's): %s", results[1])
	}
	if !strings.Contains(string(reqs[0].Raw), "- discovered_events (per user): id text, title text") {
		t.Errorf("the system prompt lacks the generated schema:\n%s", reqs[0].Raw)
	}
	// The action tag ran against the app's database.
	var demo, maria int
	var reason, notes string
	db.QueryRow(`SELECT is_active, deactivation_reason, deactivation_notes FROM discovered_events WHERE id = 'e7a0b1c2-0000-4000-8000-000000000001'`).Scan(&demo, &reason, &notes)
	db.QueryRow(`SELECT is_active FROM discovered_events WHERE id = 'e7a0b1c2-0000-4000-8000-000000000005'`).Scan(&maria)
	if demo != 0 || reason != "event_ended" || notes != "Finished at 11pm" || maria != 1 {
		t.Errorf("after the tag: demo's event active=%d reason=%q notes=%q; maria's active=%d (want 0, event_ended, 1)", demo, reason, notes, maria)
	}
}

// mustMatchOpenAPI validates body against a schema of the published
// OpenAPI document.
func mustMatchOpenAPI(t *testing.T, ref string, body []byte) {
	t.Helper()
	c := jsonschema.NewCompiler()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(server.OpenAPI))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddResource("openapi.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("openapi.json" + ref)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err == nil {
		err = sch.Validate(v)
	}
	if err != nil {
		t.Errorf("%s does not match %s: %v", body, ref, err)
	}
}

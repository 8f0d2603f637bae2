package server_test

import (
	"encoding/json"
	"testing"

	"github.com/coachd/coachd/server"
)

// TestSeed001ValidatePaths: seed 001's client calls POST
// /api/coach/validate, POST /api/coach/validate/batch and GET
// /api/coach/validate/schemas (lines 46-48), and the README says coachd's
// paths are the seed's with /v1 for /api/coach, the notes statistics
// aside. Those names answer as /v1/actions/validate[/batch] and GET
// /v1/actions/schemas do.
func TestSeed001ValidatePaths(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{})
	var one struct {
		OK         bool   `json:"ok"`
		ActionType string `json:"action_type"`
	}
	r := e.post(e.alice.key, "/v1/validate", `{"action_type":"SAVE_NOTE","payload":{"note_type":"tip","title":"T","content":"C"}}`, nil, &one)
	if r.status != 200 || !one.OK || one.ActionType != "SAVE_NOTE" {
		t.Fatalf("POST /v1/validate: %d %s", r.status, r.body)
	}
	var batch struct {
		OK      bool              `json:"ok"`
		Results []json.RawMessage `json:"results"`
	}
	r = e.post(e.alice.key, "/v1/validate/batch", `{"actions":[{"action_type":"SAVE_NOTE","payload":{"note_type":"tip","title":"T","content":"C"}}]}`, nil, &batch)
	if r.status != 200 || !batch.OK || len(batch.Results) != 1 {
		t.Fatalf("POST /v1/validate/batch: %d %s", r.status, r.body)
	}
	r = e.do(request{method: "GET", path: "/v1/validate/schemas", key: e.alice.key})
	var schemas struct {
		Schemas map[string]json.RawMessage `json:"schemas"`
	}
	if r.status != 200 || json.Unmarshal(r.body, &schemas) != nil || schemas.Schemas["SAVE_NOTE"] == nil {
		t.Fatalf("GET /v1/validate/schemas: %d %s", r.status, r.body)
	}
}

// TestSeed001NotesStatsPath: seed 001's notes panel reads its statistics
// from GET /api/coach/notes/stats/summary (line 63); with /v1 for
// /api/coach that name answers as GET /v1/notes/stats does.
func TestSeed001NotesStatsPath(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{})
	if r := e.post(e.alice.key, "/v1/notes", `{"note_type":"tip","title":"Airport","content":"Mornings pay"}`, nil, nil); r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	want := e.do(request{method: "GET", path: "/v1/notes/stats", key: e.alice.key})
	got := e.do(request{method: "GET", path: "/v1/notes/stats/summary", key: e.alice.key})
	if want.status != 200 || got.status != 200 || string(got.body) != string(want.body) {
		t.Fatalf("GET /v1/notes/stats/summary: %d %s, want %d %s", got.status, got.body, want.status, want.body)
	}
	if r := e.do(request{method: "GET", path: "/v1/notes/stats/summary", key: e.bob.key}); r.status != 200 || string(r.body) == string(want.body) {
		t.Fatalf("bob's statistics: %d %s", r.status, r.body)
	}
}

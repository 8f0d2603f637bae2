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

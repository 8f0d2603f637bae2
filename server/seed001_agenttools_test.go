package server_test

import (
	"encoding/json"
	"testing"

	"github.com/coachd/coachd/server"
)

// TestSeed001ValidateOnlyAgentActions: POST /v1/actions/validate is the
// pre-flight of an action tag, and a tag runs only a tool of the agent
// that writes it ("unknown action …: this agent has no tool"). A tool no
// agent of the server has (list_files here: a built-in the default
// agent does not list) is an unknown action, at validation as in the
// chat, and GET /v1/actions/schemas does not offer it.
func TestSeed001ValidateOnlyAgentActions(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{})
	var out struct {
		OK      bool `json:"ok"`
		Details []struct{ Field, Code string }
	}
	r := e.post(e.alice.key, "/v1/actions/validate", `{"action_type":"LIST_FILES","payload":{}}`, nil, &out)
	if r.status != 200 || out.OK || len(out.Details) != 1 || out.Details[0].Code != "unknown_action" {
		t.Fatalf("LIST_FILES, a tool of no agent: %d %s", r.status, r.body)
	}
	r = e.post(e.alice.key, "/v1/actions/validate", `{"action_type":"LIST_NOTES","payload":{}}`, nil, &out)
	if r.status != 200 || !out.OK {
		t.Fatalf("LIST_NOTES, the default agent's: %d %s", r.status, r.body)
	}
	r = e.do(request{method: "GET", path: "/v1/actions/schemas", key: e.alice.key})
	var schemas struct {
		Schemas map[string]json.RawMessage `json:"schemas"`
	}
	if r.status != 200 || json.Unmarshal(r.body, &schemas) != nil || schemas.Schemas["SAVE_NOTE"] == nil || schemas.Schemas["LIST_FILES"] != nil {
		t.Fatalf("schemas: %d %s", r.status, r.body)
	}
}

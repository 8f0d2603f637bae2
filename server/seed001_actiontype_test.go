package server_test

import (
	"encoding/json"
	"testing"

	"github.com/coachd/coachd/server"
)

// TestSeed001ValidateActionTypeShape: seed 001's validation endpoint
// answers a payload that fails with "{ "ok": false, "error":
// "VALIDATION_ERROR", "action_type": …, "details": [ { "field",
// "message", "code" } ] }" (lines 223-231), and its chat shows the
// details in a banner ("Validation Errors: Banner display for action
// validation failures", line 248). An action whose action_type is
// missing or not an action name fails validation like any other field,
// in that shape; and in a batch it is that action's result, not a 400
// for the whole batch.
func TestSeed001ValidateActionTypeShape(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{})
	type result struct {
		OK         *bool   `json:"ok"`
		Error      string  `json:"error"`
		ActionType *string `json:"action_type"`
		Details    []struct {
			Field, Message, Code string
		} `json:"details"`
	}
	for _, tt := range []struct {
		name, body, code string
	}{
		{"Missing", `{"payload":{"note_type":"tip","title":"T","content":"C"}}`, "invalid_type"},
		{"Empty", `{"action_type":"","payload":{"note_type":"tip","title":"T","content":"C"}}`, "invalid_type"},
		{"LowerCase", `{"action_type":"save_note","payload":{"note_type":"tip","title":"T","content":"C"}}`, "unknown_action"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out result
			r := e.post(e.alice.key, "/v1/validate", tt.body, nil, &out)
			if r.status != 200 || out.OK == nil || *out.OK || out.Error != "VALIDATION_ERROR" || out.ActionType == nil ||
				len(out.Details) != 1 || out.Details[0].Field != "action_type" || out.Details[0].Code != tt.code || out.Details[0].Message == "" {
				t.Fatalf("validate: %d %s", r.status, r.body)
			}
		})
	}
	t.Run("Batch", func(t *testing.T) {
		var out struct {
			OK      bool     `json:"ok"`
			Results []result `json:"results"`
		}
		r := e.post(e.alice.key, "/v1/validate/batch", `{"actions":[`+
			`{"action_type":"SAVE_NOTE","payload":{"note_type":"tip","title":"T","content":"C"}},`+
			`{"action_type":"save_note","payload":{"note_type":"tip","title":"T","content":"C"}}]}`, nil, &out)
		if r.status != 200 || out.OK || len(out.Results) != 2 {
			t.Fatalf("batch: %d %s", r.status, r.body)
		}
		if first := out.Results[0]; first.OK == nil || !*first.OK {
			t.Errorf("the valid action: %s", r.body)
		}
		if second := out.Results[1]; second.OK == nil || *second.OK || len(second.Details) != 1 || second.Details[0].Field != "action_type" {
			t.Errorf("the misnamed action: %s", r.body)
		}
	})
	t.Run("ErrNotJSON", func(t *testing.T) {
		// A body that is not a validation request at all is still refused.
		var raw json.RawMessage
		if r := e.post(e.alice.key, "/v1/validate", `[1]`, nil, &raw); r.status != 400 {
			t.Fatalf("a JSON array: %d %s", r.status, r.body)
		}
	})
}

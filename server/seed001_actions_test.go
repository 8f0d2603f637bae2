package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/coachd/coachd/server"
)

// Seed 001 validates action payloads "using Zod schemas" (line 199) at
// its validate endpoint (lines 201-231); coachd's POST
// /v1/actions/validate answers as it does.

// TestSeed001ValidatedAppliesDefault: seed 001 documents SAVE_NOTE's
// "`importance`: 1-100 (default 50)" (line 128) and answers "{ "ok": true,
// "action_type": "SAVE_NOTE", "validated": { ... } }" (lines 217-221): the
// payload as Zod parsed it, its defaults applied.
func TestSeed001ValidatedAppliesDefault(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{})
	var out struct {
		OK        bool           `json:"ok"`
		Validated map[string]any `json:"validated"`
	}
	t.Run("OK", func(t *testing.T) {
		// The document's own curl body (lines 205-214).
		r := e.post(e.alice.key, "/v1/actions/validate", `{"action_type":"SAVE_NOTE","payload":{"note_type":"preference","title":"Test","content":"Test content"}}`, nil, &out)
		if r.status != 200 || !out.OK {
			t.Fatalf("validate: %d %s", r.status, r.body)
		}
		if out.Validated["importance"] != 50.0 || out.Validated["title"] != "Test" {
			t.Fatalf("validated has no importance 50 (the documented default): %s", r.body)
		}
	})
	t.Run("Given", func(t *testing.T) {
		r := e.post(e.alice.key, "/v1/actions/validate", `{"action_type":"SAVE_NOTE","payload":{"note_type":"tip","title":"T","content":"C","importance":75}}`, nil, &out)
		if r.status != 200 || !out.OK || out.Validated["importance"] != 75.0 {
			t.Fatalf("validate: %d %s", r.status, r.body)
		}
	})
	t.Run("Batch", func(t *testing.T) {
		var batch struct {
			Results []struct {
				Validated map[string]any `json:"validated"`
			} `json:"results"`
		}
		r := e.post(e.alice.key, "/v1/actions/validate/batch", `{"actions":[{"action_type":"SAVE_NOTE","payload":{"note_type":"tip","title":"T","content":"C"}}]}`, nil, &batch)
		if r.status != 200 || len(batch.Results) != 1 || batch.Results[0].Validated["importance"] != 50.0 {
			t.Fatalf("validate batch: %d %s", r.status, r.body)
		}
	})
}

// TestSeed001ValidationDetailCode: seed 001's failure response (lines
// 224-231) is "{ "ok": false, "error": "VALIDATION_ERROR", "action_type":
// "SAVE_NOTE", "details": [ { "field": "title", "message": "Title is
// required", "code": "too_small" } ] }": a detail's code is Zod's, here
// for a string under its minimum, not a JSON Schema keyword.
func TestSeed001ValidationDetailCode(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{})
	for _, tt := range []struct {
		name, payload, field, code string
	}{
		// The document's own case.
		{"TooSmall", `{"note_type":"preference","title":"","content":"Test content"}`, "title", "too_small"},
		// Zod's codes for SAVE_NOTE's other rules (lines 122-128).
		{"Missing", `{"note_type":"preference","content":"Test content"}`, "title", "invalid_type"},
		{"WrongType", `{"note_type":"tip","title":5,"content":"c"}`, "title", "invalid_type"},
		{"NotInteger", `{"note_type":"tip","title":"t","content":"c","importance":1.5}`, "importance", "invalid_type"},
		{"TooBig", `{"note_type":"tip","title":"t","content":"c","importance":101}`, "importance", "too_big"},
		{"BelowMinimum", `{"note_type":"tip","title":"t","content":"c","importance":0}`, "importance", "too_small"},
		{"TooLong", `{"note_type":"tip","title":"` + strings.Repeat("x", 201) + `","content":"c"}`, "title", "too_big"},
		{"Enum", `{"note_type":"nope","title":"t","content":"c"}`, "note_type", "invalid_value"},
		{"Pattern", `{"note_type":"tip","title":"t","content":"c","market_slug":"Dallas TX"}`, "market_slug", "invalid_format"},
		{"UnknownKey", `{"note_type":"tip","title":"t","content":"c","extra":1}`, "(input)", "unrecognized_keys"},
		{"NotObject", `"x"`, "(input)", "invalid_type"},
		{"NoPayload", `null`, "payload", "invalid_type"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out struct {
				OK      bool   `json:"ok"`
				Error   string `json:"error"`
				Details []struct {
					Field, Message, Code string
				} `json:"details"`
			}
			body, _ := json.Marshal(map[string]any{"action_type": "SAVE_NOTE", "payload": json.RawMessage(tt.payload)})
			r := e.post(e.alice.key, "/v1/actions/validate", string(body), nil, &out)
			if r.status != 200 || out.OK || out.Error != "VALIDATION_ERROR" || len(out.Details) != 1 || out.Details[0].Field != tt.field {
				t.Fatalf("validate: %d %s", r.status, r.body)
			}
			if out.Details[0].Code != tt.code || out.Details[0].Message == "" {
				t.Fatalf("detail code %q, want Zod's %q: %s", out.Details[0].Code, tt.code, r.body)
			}
		})
	}
}

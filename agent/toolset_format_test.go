package agent

import (
	"encoding/json"
	"testing"

	"github.com/coachd/coachd"
)

// TestToolsetValidateFormat: a tool's "format" is checked, not only
// noted. Seed 001's DEACTIVATE_EVENT takes "event_id: UUID", which the
// rideshare pack declares as {type: string, format: uuid}; JSON Schema
// 2020-12 treats format as an annotation unless asked, so "nope" passed
// POST /v1/actions/validate and reached the app's database as a lookup.
func TestToolsetValidateFormat(t *testing.T) {
	ts, err := NewToolset(schemaTool{`{"type":"object","properties":{"event_id":{"type":"string","format":"uuid"}},"additionalProperties":false}`})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("OK", func(t *testing.T) {
		if err := ts.ValidateInput("t", json.RawMessage(`{"event_id":"1b4e28ba-2fa1-41d2-883f-0016d3cca427"}`)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("ErrNotUUID", func(t *testing.T) {
		err := ts.ValidateInput("t", json.RawMessage(`{"event_id":"nope"}`))
		if err == nil {
			t.Fatal("a non-UUID event_id passed format: uuid")
		}
		e := coachd.AsError(err)
		if e.Code != coachd.EINVALID || len(e.Details) != 1 || e.Details[0].Field != "event_id" || e.Details[0].Code != "format" {
			t.Fatalf("got %+v", e)
		}
	})
}

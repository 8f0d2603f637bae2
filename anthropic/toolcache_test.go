package anthropic

import (
	"encoding/json"
	"testing"

	"github.com/coachd/coachd"
)

// TestToolCache: a tool's JSON is encoded once while its spec stays the
// same, and afresh when any of it changes, even in place.
func TestToolCache(t *testing.T) {
	var c toolCache
	mustJSON := func(spec coachd.ToolSpec) []byte {
		t.Helper()
		got, err := c.json(&spec)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := toolJSON(spec)
		if string(got) != string(want) {
			t.Fatalf("json = %s, want %s", got, want)
		}
		return got
	}
	schema := json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`)
	spec := coachd.ToolSpec{Name: "t", Description: "d", InputSchema: schema}
	t.Run("OK", func(t *testing.T) {
		first := mustJSON(spec)
		if again := mustJSON(spec); &again[0] != &first[0] {
			t.Error("the same spec was encoded again")
		}
	})
	t.Run("SchemaChangedInPlace", func(t *testing.T) {
		copy(schema[len(`{"type":"object","properties":{"`):], "b")
		mustJSON(spec)
	})
	t.Run("TwoDescriptions", func(t *testing.T) {
		other := spec
		other.Description = "another agent's d"
		a := mustJSON(spec)
		mustJSON(other)
		if again := mustJSON(spec); &again[0] != &a[0] {
			t.Error("one description's entry pushed out the other's")
		}
	})
	t.Run("ErrBadSchema", func(t *testing.T) {
		bad := coachd.ToolSpec{Name: "bad", InputSchema: json.RawMessage(`{`)}
		for range 2 {
			if _, err := c.json(&bad); coachd.ErrorCode(err) != coachd.EINVALID {
				t.Errorf("err = %v, want EINVALID", err)
			}
		}
	})
}

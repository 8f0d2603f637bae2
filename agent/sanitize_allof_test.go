package agent

import (
	"encoding/json"
	"testing"
)

// TestSanitizeSchemaAllOfKeepsBoth: a one-item allOf whose item and
// wrapper both have properties or required is merged with both kept. The
// wrapper's won and the item's were dropped: the model was shown a tool
// without field b, while its input was checked against the whole schema
// and refused for missing b, which it had never been told of.
func TestSanitizeSchemaAllOfKeepsBoth(t *testing.T) {
	in := `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],
	"allOf":[{"properties":{"b":{"type":"string"}},"required":["b"]}]}`
	got, err := SanitizeSchema(json.RawMessage(in))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["a","b"],"type":"object"}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	// A key both give another value for cannot be merged: allOf stays.
	in = `{"type":"object","description":"x","allOf":[{"description":"y"}]}`
	if got, _ := SanitizeSchema(json.RawMessage(in)); string(got) != `{"allOf":[{"description":"y"}],"description":"x","type":"object"}` {
		t.Fatalf("conflict: got %s", got)
	}
}

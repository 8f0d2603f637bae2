package agent

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/tools"
)

// TestToolsJSONLen: toolsJSONLen is len(json.Marshal(tools)) for the
// set's own specs, any subset of them, specs that are not its own (or
// changed copies of its own) and no tools at all.
func TestToolsJSONLen(t *testing.T) {
	ts, err := NewToolset(tools.Builtins()...)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for n := range ts.specs {
		names = append(names, n)
	}
	slices.Sort(names)
	own := ts.Specs(names)
	changed := own[0]
	changed.Description += " <now> & then"
	schema := own[1]
	schema.InputSchema = json.RawMessage(`{ "type": "object" }`)
	foreign := coachd.ToolSpec{Name: "elsewhere", Description: "\u2028 \"quoted\"", InputSchema: json.RawMessage(`{}`)}
	for name, specs := range map[string][]coachd.ToolSpec{
		"nil":     nil,
		"empty":   ts.Specs(nil),
		"one":     ts.Specs(names[:1]),
		"all":     own,
		"some":    ts.Specs([]string{names[2], names[0], "no_such_tool", names[1]}),
		"changed": {changed, own[2]},
		"schema":  {own[0], schema},
		"foreign": {foreign, own[0]},
	} {
		want, _ := json.Marshal(specs)
		if got := ts.toolsJSONLen(specs); got != len(want) {
			t.Errorf("%s: %d, want %d", name, got, len(want))
		}
	}
	// A copy made by With keeps the lengths.
	bound, err := ts.With(tools.Builtins()[0])
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(own)
	if got := bound.toolsJSONLen(bound.Specs(names)); got != len(want) {
		t.Errorf("With: %d, want %d", got, len(want))
	}
}

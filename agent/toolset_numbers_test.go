package agent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/coachd/coachd"
)

// TestSecurityToolInputNumbers: the schema library reads every number it
// checks as an exact big.Rat, so 1e999999 (9 bytes) costs it tens of
// milliseconds and a million digits seconds, on every tool call, action
// validation or interactive answer an app or the model sends (50 of them
// in one /v1/actions/validate/batch request: seconds of CPU for 6 KB). No
// tool can read a number past float64 anyway: such a number is refused,
// naming its field, before the schema sees it.
func TestSecurityToolInputNumbers(t *testing.T) {
	ts, err := NewToolset(schemaTool{`{"type":"object","properties":{"n":{"type":"number"},"a":{"type":"array","items":{"type":"integer"}}}}`})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("Refused", func(t *testing.T) {
		for _, tc := range []struct{ in, field string }{
			{`{"n":1e999999}`, "n"},
			{`{"n":-1E+999999}`, "n"},
			{`{"n":1e-999999}`, "n"},
			{`{"n":1e400}`, "n"},
			{`{"n":` + strings.Repeat("7", 1000) + `}`, "n"},
			{`{"n":0.` + strings.Repeat("0", 1000) + `1}`, "n"},
			{`{"a":[1,2e999999]}`, "a.1"},
			{`1e999999`, "(input)"},
		} {
			err := ts.ValidateInput("t", json.RawMessage(tc.in))
			e := coachd.AsError(err)
			if err == nil || e.Code != coachd.EINVALID || len(e.Details) != 1 || e.Details[0].Field != tc.field || e.Details[0].Code != "range" {
				t.Errorf("%.40s: %v %+v, want one range error for %s", tc.in, err, e.Details, tc.field)
			}
		}
	})
	t.Run("OK", func(t *testing.T) {
		for _, in := range []string{`{"n":1e300}`, `{"n":-1.5E-300}`, `{"n":12345678901234567890}`, `{"n":0.30000000000000004}`, `{"a":[5e1,-0]}`} {
			if err := ts.ValidateInput("t", json.RawMessage(in)); err != nil {
				t.Errorf("%s: %v, want accepted", in, err)
			}
		}
	})
}

// TestSecuritySchemaNumbers: a schema's own numbers are read as exact
// big.Rats when it compiles, so 32 KiB of "minimum": 1e-999999 (a tool an
// MCP server lists, under the 32 KiB bound) held a core for 20 s, and
// again each time the server says its list changed. Such a schema is
// refused like one that does not compile: the tool is skipped.
func TestSecuritySchemaNumbers(t *testing.T) {
	for _, schema := range []string{
		`{"type":"object","properties":{"n":{"type":"number","minimum":1e-999999}}}`,
		`{"type":"object","properties":{"n":{"type":"number","multipleOf":1e-999999}}}`,
		`{"type":"object","properties":{"n":{"enum":[1,` + strings.Repeat("9", 200) + `]}}}`,
	} {
		if _, err := NewToolset(schemaTool{schema}); err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("%.80s: %v, want refused naming a number out of range", schema, err)
		}
	}
	if _, err := NewToolset(schemaTool{`{"type":"object","properties":{"n":{"type":"number","minimum":-1e300,"maximum":1.5e300,"multipleOf":0.01}}}`}); err != nil {
		t.Errorf("ordinary bounds: %v", err)
	}
}

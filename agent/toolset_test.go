package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/coachd/coachd"
)

type schemaTool struct{ schema string }

func (s schemaTool) Definition() coachd.ToolDef {
	return coachd.ToolDef{Name: "t", InputSchema: json.RawMessage(s.schema)}
}
func (schemaTool) Execute(context.Context, coachd.ToolCall, coachd.ToolEnv) (coachd.ToolResult, error) {
	return coachd.ToolResult{}, nil
}

func TestToolsetValidate(t *testing.T) {
	ts, err := NewToolset(schemaTool{`{"type":"object","properties":{"n":{"type":"integer","maximum":5},"s":{"type":"string"}},"required":["s"],"additionalProperties":false}`})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ in, field string }{
		{`{"s":"x","n":9}`, "n"},
		{`{"n":1}`, "s"}, // a missing property is named (seed 001's validation shape)
		{`{"s":1}`, "s"},
		{`{"s":"x","zz":1}`, "(input)"},
		{`not json`, "(input)"},
	} {
		err := ts.ValidateInput("t", json.RawMessage(tc.in))
		if err == nil {
			t.Fatalf("%s: want an error", tc.in)
		}
		e := coachd.AsError(err)
		if e.Code != coachd.EINVALID || len(e.Details) == 0 || e.Details[0].Field != tc.field {
			t.Fatalf("%s: got %+v", tc.in, e)
		}
		if txt := InvalidInputText("t", err); !strings.Contains(txt, tc.field) {
			t.Fatalf("%s: text %q does not name the field", tc.in, txt)
		}
	}
	if err := ts.ValidateInput("t", json.RawMessage(`{"s":"ok","n":2}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := NewToolset(schemaTool{`{"type":"object"}`}, schemaTool{`{"type":"object"}`}); err == nil {
		t.Fatal("duplicate tool names must be refused")
	}
	if _, err := NewToolset(schemaTool{`{"type": 7}`}); err == nil {
		t.Fatal("a bad schema must be refused")
	}
}

func TestSanitizeSchema(t *testing.T) {
	in := `{"$schema":"https://json-schema.org/draft/2020-12/schema","title":"X","$id":"x",
	"allOf":[{"type":"object","properties":{"title":{"type":"string","title":"T"},"n":{"allOf":[{"type":"integer"}]}}}]}`
	got, err := SanitizeSchema(json.RawMessage(in))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"properties":{"n":{"type":"integer"},"title":{"type":"string"}},"type":"object"}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

package agent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/coachd/coachd"
)

// TestSecurityToolInputProblemsCapped: every wrong item of an array is a
// problem of its own, so 900 KB of [1,1,1,…] against an array of strings
// made 450,000 details: 32 MB of error JSON for /v1/tools/execute or
// /v1/actions/validate to send, or a tool result of that size in the
// model's history. The first problems are listed, then how many more.
func TestSecurityToolInputProblemsCapped(t *testing.T) {
	ts, err := NewToolset(schemaTool{`{"type":"object","properties":{"a":{"type":"array","items":{"type":"string"}}},"additionalProperties":false}`})
	if err != nil {
		t.Fatal(err)
	}
	err = ts.ValidateInput("t", json.RawMessage(`{"a":[`+strings.Repeat("1,", 999)+`1]}`))
	e := coachd.AsError(err)
	if e.Code != coachd.EINVALID || len(e.Details) != maxInputProblems+1 {
		t.Fatalf("%d details, want %d and a last one saying how many more", len(e.Details), maxInputProblems+1)
	}
	if first := e.Details[0]; first.Field != "a.0" {
		t.Errorf("first detail %+v, want a.0", first)
	}
	if last := e.Details[maxInputProblems]; last.Field != "(input)" || !strings.Contains(last.Message, "980 more") {
		t.Errorf("last detail %+v, want (input) naming 980 more", last)
	}
	if text := InvalidInputText("t", err); len(text) > 4096 {
		t.Errorf("the model's text is %d bytes", len(text))
	}
	// Few problems are all listed, as before.
	e = coachd.AsError(ts.ValidateInput("t", json.RawMessage(`{"a":[1,2],"b":3}`)))
	if len(e.Details) != 3 {
		t.Errorf("details %+v, want 3", e.Details)
	}
}

package coachd

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzCleanJSON: for any valid JSON, AppendCleanJSON writes what
// json.Marshal writes of it as a json.RawMessage, and CleanJSON reports
// whether that is the JSON itself.
func FuzzCleanJSON(f *testing.F) {
	for _, s := range []string{
		`{"a": [1, 2, {"b": "<c> & d"}]}`,
		"\"\u2028\u2029\\u2028\"",
		`{"k":"v"}`,
		" [ true , false , null ] ",
		`"\\\"<\\"`,
		"{\"x\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		want, err := json.Marshal(json.RawMessage(raw))
		if err != nil {
			t.Fatalf("json.Marshal of valid JSON %q: %v", raw, err)
		}
		if got := AppendCleanJSON([]byte("x"), raw); !bytes.Equal(got[1:], want) || got[0] != 'x' {
			t.Fatalf("AppendCleanJSON(%q) = %q, want %q", raw, got[1:], want)
		}
		if CleanJSON(raw) != bytes.Equal(raw, want) {
			t.Fatalf("CleanJSON(%q) = %v, json.Marshal writes %q", raw, CleanJSON(raw), want)
		}
	})
}

package mcp

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzFilterLines: whatever a desktop client writes on stdin, the line
// filter in front of the SDK's stdio transport ends at the input's end,
// passes on only whole JSON lines (each one of the input's, as it was),
// and answers every other non-blank line with one JSON-RPC error line of
// its own: parse error or invalid request, version 2.0, id null or the
// line's own id.
func FuzzFilterLines(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n",
		"not json\n" + `{"jsonrpc":"2.0","id":"a","method":"ping"}` + "\r\n",
		`{"id":7,"method":"ping"}` + "\n[]\n\n   \n",
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"s":"` + string(bytes.Repeat([]byte("a"), 100)) + `"}}}` + "\n",
		"{\"jsonrpc\":\"2.0\",\"id\":1e400}\n\xff\xfe\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		const limit = 64
		var good, answers bytes.Buffer
		if err := filterLines(bytes.NewReader(in), &good, &answers, limit); err != nil {
			t.Fatalf("filterLines: %v", err)
		}
		lines := map[string]bool{}
		for _, l := range bytes.SplitAfter(in, []byte("\n")) {
			lines[string(l)] = true
		}
		for _, l := range bytes.SplitAfter(good.Bytes(), []byte("\n")) {
			if len(l) == 0 {
				continue
			}
			if !lines[string(l)] {
				t.Fatalf("passed on %q, not a line of the input", l)
			}
			if len(l) > limit+1 || !json.Valid(l) {
				t.Fatalf("passed on %q: not a JSON line within %d bytes", l, limit)
			}
		}
		for _, l := range bytes.Split(bytes.TrimSuffix(answers.Bytes(), []byte("\n")), []byte("\n")) {
			if len(l) == 0 && answers.Len() == 0 {
				continue
			}
			var a struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   struct{ Code int64 }
			}
			if err := json.Unmarshal(l, &a); err != nil || a.JSONRPC != "2.0" || (a.Error.Code != -32700 && a.Error.Code != -32600) {
				t.Fatalf("answer %q: not a JSON-RPC parse error or invalid request (%v)", l, err)
			}
			if len(a.ID) == 0 {
				t.Fatalf("answer %q has no id (null is due)", l)
			}
		}
	})
}

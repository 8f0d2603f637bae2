package anthropictest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// oldSegment is the cache accounting's view of one block as it was before
// the scanner (json.Unmarshal into a map, drop cache_control, json.Marshal),
// kept as the oracle canonical must match byte for byte.
func oldSegment(raw json.RawMessage) ([]byte, bool, time.Duration) {
	var m map[string]json.RawMessage
	bp, ttl := false, ttl5m
	if json.Unmarshal(raw, &m) == nil {
		var cc json.RawMessage
		cc, bp = m["cache_control"]
		var c struct{ TTL string }
		if json.Unmarshal(cc, &c) == nil && c.TTL == "1h" {
			ttl = ttl1h
		}
		delete(m, "cache_control")
		raw, _ = json.Marshal(m)
	}
	return raw, bp, ttl
}

func newSegment(raw []byte) ([]byte, bool, time.Duration) {
	out, cc, bp, _ := canonical(nil, raw, nil)
	var c struct{ TTL string }
	ttl := ttl5m
	if bp && json.Unmarshal(cc, &c) == nil && c.TTL == "1h" {
		ttl = ttl1h
	}
	return out, bp, ttl
}

func checkSegment(t *testing.T, raw []byte) {
	t.Helper()
	want, wbp, wttl := oldSegment(raw)
	got, gbp, gttl := newSegment(raw)
	if !bytes.Equal(got, want) || gbp != wbp || gttl != wttl {
		t.Fatalf("canonical(%q) = %q %v %v, want %q %v %v", raw, got, gbp, gttl, want, wbp, wttl)
	}
}

var canonicalSeeds = []string{
	`{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}`,
	`{"type":"text","text":"hi","cache_control":{"type":"ephemeral","ttl":"1h"}}`,
	`{"cache_control":{"TTL":"1h"}}`,
	`{"cache_control":null,"b":1,"a":[1, 2]}`,
	`{"b":1,"a":2,"b":3}`,
	`{"a\u0062":1,"ab":2}`,
	`{"a!":1,"a":2,"a ":3}`,
	`{"t":"<b>&amp;</b>","u":"\u003c"}`,
	"{\"t\":\"line\u2028sep\"}",
	` { "type" : "text" , "text" : "x y" } `,
	`{}`, `null`, `"text"`, `[1,{"a":1}]`, `12`, `{"x":{"z":1,"y":2}}`,
	`{"name":"save_note","input_schema":{"type":"object","properties":{"title":{"type":"string"}}}}`,
	`{"type":"tool_result","tool_use_id":"","content":"{\"note_id\":\"n\",\"success\":true}","cache_control":{"type":"ephemeral"}}`,
}

// TestCanonicalMatchesMap: the scanner's canonical form is the old map
// round trip's, byte for byte, on the seeds and on every block of the
// captured coachd requests.
func TestCanonicalMatchesMap(t *testing.T) {
	for _, s := range canonicalSeeds {
		checkSegment(t, []byte(s))
	}
	files, _ := filepath.Glob("testdata/coach_*.json")
	if len(files) == 0 {
		t.Fatal("no captured requests in testdata")
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		req, err := parseRequest(raw, false)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		blocks := append(append([]json.RawMessage(nil), req.Tools...), req.sys...)
		for _, m := range req.Messages {
			blocks = append(blocks, m.blocks...)
		}
		fast := 0
		for _, b := range blocks {
			checkSegment(t, b)
			ms, ok := members(nil, b)
			if ok {
				fast++
				for _, m := range ms {
					ok = ok && plainKey(m.key) && plainValue(m.value)
				}
			}
			if !ok {
				t.Errorf("%s: block %s takes the slow path", f, b)
			}
		}
		if fast < 10 {
			t.Errorf("%s: %d blocks, want a realistic request", f, fast)
		}
	}
}

// FuzzCanonical: on valid JSON, canonical is the map round trip; on
// anything, it does not panic.
func FuzzCanonical(f *testing.F) {
	for _, s := range canonicalSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			canonical(nil, raw, nil)
			elements(nil, raw)
			return
		}
		checkSegment(t, raw)
		if raw = bytes.TrimSpace(raw); len(raw) > 0 && raw[0] == '[' {
			var want []json.RawMessage
			json.Unmarshal(raw, &want)
			got, ok := elements(nil, raw)
			if !ok || len(got) != len(want) {
				t.Fatalf("elements(%q) = %q %v, want %q", raw, got, ok, want)
			}
			for i := range got {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("elements(%q)[%d] = %q, want %q", raw, i, got[i], want[i])
				}
			}
		}
	})
}

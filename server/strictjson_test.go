package server

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/coachd/coachd"
)

// FuzzStrictJSON checks unmarshalStrict, the reader of every request body
// (issue 20 findings 6 and 12): it never panics, refuses with EINVALID
// only, and whatever it accepts encoding/json reads as the same value, with
// no NUL anywhere, so the handlers and the code behind them (which reads
// stored JSON with encoding/json) never disagree about a body.
func FuzzStrictJSON(f *testing.F) {
	for _, s := range []string{
		`{}`, `null`, ` {"a":[1,"x",null,true,{"b":{}}]} `, `{"a":1e400}`, `[1.5,-0,1E2]`,
		`{"a":1,"a":2}`, "{\"a\":\"\xff\"}", `{"a":"\u0000"}`, `{"\u0000":1}`, `"\ud800"`, `"\ud83d\ude00"`,
		strings.Repeat(`[`, 65) + strings.Repeat(`]`, 65), `{}{}`, `{} x`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var got any
		if err := unmarshalStrict(body, &got); err != nil {
			if code := coachd.ErrorCode(err); code != coachd.EINVALID {
				t.Fatalf("%q: error %v has code %q, want %q", body, err, code, coachd.EINVALID)
			}
			return
		}
		var want any
		if err := json.Unmarshal(body, &want); err != nil {
			t.Fatalf("accepted %q, which encoding/json refuses: %v", body, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("accepted %q as %#v; encoding/json reads %#v", body, got, want)
		}
		if err := jsonv2.Unmarshal(body, new(any)); err != nil {
			t.Fatalf("accepted %q, which is not strict JSON: %v", body, err)
		}
		if hasNUL(want) {
			t.Fatalf("accepted a NUL: %q", body)
		}
	})
}

// hasNUL reports whether a decoded JSON value holds U+0000 in any string
// or key.
func hasNUL(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.ContainsRune(x, 0)
	case []any:
		for _, e := range x {
			if hasNUL(e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range x {
			if strings.ContainsRune(k, 0) || hasNUL(e) {
				return true
			}
		}
	}
	return false
}

// BenchmarkStrictJSON reads a record body of about 1 MiB (the body limit)
// strictly and, for comparison, with encoding/json as before.
func BenchmarkStrictJSON(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"session_id":"sess_x","reservation_id":"res_x","tokens_used":10,"messages":[`)
	for i := 0; sb.Len() < 1<<20-400; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"role":"assistant","content_blocks":[{"type":"text","text":"` + strings.Repeat("mornings é ", 30) +
			`"},{"type":"tool_use","id":"toolu_1","name":"save_note","input":{"title":"x","tags":["a","b"],"n":1.5}}]}`)
	}
	sb.WriteString(`]}`)
	body := []byte(sb.String())
	b.Run("strict", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			var v recordRequest
			if err := unmarshalStrict(body, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			var v recordRequest
			if err := json.Unmarshal(body, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

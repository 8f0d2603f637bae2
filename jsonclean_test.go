package coachd

import (
	"bytes"
	"encoding/json"
	"strings"
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
		if clean := bytes.Equal(raw, want); CleanJSON(raw) != clean || cleanLong(raw) != clean {
			t.Fatalf("CleanJSON(%q) = %v (cleanLong %v), json.Marshal writes %q", raw, CleanJSON(raw), cleanLong(raw), want)
		}
	})
}

// TestCleanJSONLongStrings: long JSON is passed over eight bytes at a time,
// so each byte it treats apart is tried at every offset of an eight-byte
// word, in strings and between tokens, against json.Marshal.
func TestCleanJSONLongStrings(t *testing.T) {
	for _, c := range []string{`\"`, `\\`, `\n`, "<", ">", "&", " ", "\t", "\xe2\x80\xa8", "\xe2\x80\xa9", "\xe2\x80\xaa", "\xc3\xa9", "\x7f", "!", `a`} {
		for n := range 20 {
			s := `"` + strings.Repeat("a", n) + c + strings.Repeat("b", 19-n) + `"`
			for _, doc := range []string{s, `{"k":` + s + `}`, `[` + strings.Repeat("1", n+1) + `,` + s + `]`, `[` + strings.Repeat("1", n+1) + ` ,` + s + `]`} {
				raw := []byte(doc)
				if !json.Valid(raw) {
					continue
				}
				want, err := json.Marshal(json.RawMessage(raw))
				if err != nil {
					t.Fatal(err)
				}
				if got := cleanLong(raw); got != bytes.Equal(raw, want) {
					t.Errorf("cleanLong(%q) = %v, json.Marshal writes %q", raw, got, want)
				}
			}
		}
	}
}

// BenchmarkCleanJSON: a tool's input, and a photo's source.
func BenchmarkCleanJSON(b *testing.B) {
	for _, c := range []struct {
		name string
		raw  []byte
	}{
		{"input", []byte(`{"note_type":"insight","title":"Airport runs","content":"Queues are shortest before 6am","importance":70,"tags":["airport","morning"]}`)},
		{"photo", []byte(`{"data":"` + strings.Repeat("QUJD", 1<<18) + `","media_type":"image/jpeg","type":"base64"}`)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.raw)))
			for b.Loop() {
				if !CleanJSON(c.raw) {
					b.Fatal("not clean")
				}
			}
		})
	}
}

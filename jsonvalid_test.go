package coachd

import (
	"encoding/json"
	"strings"
	"testing"
)

// validCases are JSON texts at the edges of the grammar, valid and not;
// each is checked against json.Valid, not against a hand-written answer.
var validCases = []string{
	// Values alone, and space around them.
	`0`, `-0`, `1`, `-1`, `10`, `1.5`, `-1.5e10`, `1E+2`, `1e-2`, `0.0`, ` 7 `, "\t\n\r 7\r\n\t",
	`true`, `false`, `null`, `""`, `"a"`, `{}`, `[]`, ` { } `, ` [ ] `,
	// Numbers that are not.
	``, ` `, `-`, `01`, `-01`, `1.`, `.5`, `1e`, `1e+`, `+1`, `1.e5`, `0x1`, `1_000`, `NaN`, `Infinity`, `--1`, `1 2`,
	// Literals cut short or run on.
	`tru`, `truex`, `nul`, `nulll`, `fals`, `True`, `t`, `n`, `f`,
	// Strings: escapes, control characters, bytes that are not UTF-8.
	`"\"\\\/\b\f\n\r\t"`, `"\u00e9\uD83D\uDE00"`, `"\u12"`, `"\u12G4"`, `"\u123G"`, `"\uG123"`, `"\x"`, `"\'"`, `"\`, `"abc`, `"a"b"`,
	"\"a\tb\"", "\"a\x00b\"", "\"a\x1fb\"", "\"a\x7fb\"", "\"\xff\xfe\"", "\"\u2028\"", `"<&>"`,
	// Objects.
	`{"a":1}`, `{ "a" : 1 , "b" : [ 2 ] }`, `{"a":1,}`, `{"a"}`, `{"a":}`, `{a:1}`, `{"a" 1}`, `{,"a":1}`,
	`{"a":1 "b":2}`, `{"a":1}}`, `{"a":{"b":{"c":{}}}}`, `{1:2}`, `{"a":1`, `{"a"`, `{"`, `{`,
	// Arrays.
	`[1,2,3]`, `[ 1 , [ 2 , [ 3 ] ] ]`, `[1,]`, `[1 23]`, `[1;2]`, `{"a":1;"b":2}`, `[,1]`, `[1 2]`, `[1]]`, `[[]`, `[`, `]`, `[}`, `{]`, `[{"a":[{}]}]`,
	// Two values, or something after one.
	`{}{}`, `[] []`, `"a" "b"`, `1,`, `{},`, "{}\x00",
}

func TestValidJSON(t *testing.T) {
	for _, s := range validCases {
		if got, want := ValidJSON([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Errorf("ValidJSON(%q) = %v, json.Valid says %v", s, got, want)
		}
	}
}

// TestValidJSONLongStrings: a string's plain bytes are skipped eight at a
// time, so each byte a string treats apart is tried at every offset of
// an eight-byte word, in strings longer than a few words.
func TestValidJSONLongStrings(t *testing.T) {
	for _, c := range []string{`"`, `\`, `\"`, `\n`, `\u00e9`, `\x`, "\x00", "\x1f", "\x20", "\x7f", "\x80", "\xff", "\xe2\x80\xa8", `a`} {
		for n := range 20 {
			s := `"` + strings.Repeat("a", n) + c + strings.Repeat("b", 19-n) + `"`
			for _, doc := range []string{s, `{"k":` + s + `}`, "[" + s + "," + s + "]"} {
				if got, want := ValidJSON([]byte(doc)), json.Valid([]byte(doc)); got != want {
					t.Errorf("ValidJSON(%q) = %v, json.Valid says %v", doc, got, want)
				}
			}
		}
	}
}

// TestValidJSONDepth: nesting is allowed as deep as json.Valid allows it
// and no deeper, empty containers included.
func TestValidJSONDepth(t *testing.T) {
	for _, depth := range []int{maxJSONDepth - 1, maxJSONDepth, maxJSONDepth + 1} {
		for _, c := range []struct {
			name  string
			build func(depth int) string
		}{
			{"arrays", func(d int) string { return strings.Repeat("[", d) + "1" + strings.Repeat("]", d) }},
			{"empty arrays", func(d int) string { return strings.Repeat("[", d) + strings.Repeat("]", d) }},
			{"objects", func(d int) string { return strings.Repeat(`{"k":`, d-1) + "{}" + strings.Repeat("}", d-1) }},
		} {
			s := c.build(depth)
			want := json.Valid([]byte(s))
			if got := ValidJSON([]byte(s)); got != want {
				t.Errorf("%s %d deep: ValidJSON = %v, json.Valid says %v", c.name, depth, got, want)
			}
			if want != (depth <= maxJSONDepth) {
				t.Errorf("%s %d deep: json.Valid says %v: the limit is not %d", c.name, depth, want, maxJSONDepth)
			}
		}
	}
}

// FuzzValidJSON: ValidJSON agrees with json.Valid on anything.
func FuzzValidJSON(f *testing.F) {
	for _, s := range validCases {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := ValidJSON(data), json.Valid(data); got != want {
			t.Fatalf("ValidJSON(%q) = %v, json.Valid says %v", data, got, want)
		}
	})
}

// BenchmarkValidJSON: a tool's input and a tool result of the size a
// coach's history carries, json.Valid beside ValidJSON.
func BenchmarkValidJSON(b *testing.B) {
	input := []byte(`{"note_type":"insight","category":"earnings","title":"Airport runs","content":"Airport queues are shortest before 6am; ` +
		`the cell lot fills by 7.","importance":70,"tags":["airport","morning"],"ratio":1.25e-3}`)
	result := []byte(`{"saved":true,"id":"note_01JABCDEFGHJKMNPQRSTVWXYZ","content":"` + strings.Repeat(`Queues \"short\" before 6am. `, 20) + `"}`)
	for _, c := range []struct {
		name string
		data []byte
	}{{"input", input}, {"result", result}} {
		b.Run(c.name+"/json.Valid", func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			for b.Loop() {
				if !json.Valid(c.data) {
					b.Fatal("invalid")
				}
			}
		})
		b.Run(c.name+"/ValidJSON", func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			for b.Loop() {
				if !ValidJSON(c.data) {
					b.Fatal("invalid")
				}
			}
		})
	}
}

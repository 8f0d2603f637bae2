package coachd_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

func semantic(t testing.TB, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return v
}

func TestBlockRoundTrip(t *testing.T) {
	for _, in := range []string{
		`{"type":"text","text":"hi","citations":[{"type":"char_location","cited_text":"x"}],"cache_control":{"type":"ephemeral"}}`,
		`{"type":"text","text":""}`,
		`{"type":"thinking","thinking":"hmm","signature":"sig=="}`,
		`{"type":"redacted_thinking","data":"opaque"}`,
		`{"type":"tool_use","id":"toolu_1","name":"get","input":{"a":[1,2]},"caller":{"type":"direct"}}`,
		`{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"ok"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA=="}}],"is_error":true}`,
		`{"type":"tool_result","tool_use_id":"toolu_1","content":"plain"}`,
		`{"type":"image","source":{"type":"url","url":"https://example.invalid/a.png"}}`,
		`{"type":"document","source":{"type":"text","media_type":"text/plain","data":"doc"},"title":"T"}`,
		`{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"q":"x"},"future":{"nested":[true,null]}}`,
	} {
		var b coachd.Block
		if err := json.Unmarshal([]byte(in), &b); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		out, err := json.Marshal(b)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got, want := semantic(t, out), semantic(t, []byte(in)); !reflect.DeepEqual(got, want) {
			t.Errorf("round trip\n got %s\nwant %s", out, in)
		}
	}
	for _, bad := range []string{`{}`, `{"type":""}`, `{"type":7}`, `[]`, `{"type":"text","text":5}`} {
		var b coachd.Block
		if err := json.Unmarshal([]byte(bad), &b); err == nil {
			t.Errorf("%s: want an error", bad)
		}
	}
	if got := (coachd.Block{Type: coachd.BlockToolResult, Content: json.RawMessage(`[{"type":"text","text":"a"},{"type":"text","text":"b"}]`)}).ResultText(); got != "ab" {
		t.Errorf("ResultText %q", got)
	}
}

// FuzzBlock: whatever decodes as a block encodes to JSON that decodes to
// the same block again, with the same meaning.
func FuzzBlock(f *testing.F) {
	f.Add(`{"type":"text","text":"hi","x":1}`)
	f.Add(`{"type":"tool_use","id":"a","name":"b","input":{}}`)
	f.Add(`{"type":"tool_result","tool_use_id":"a","content":[{"type":"text","text":"t"}],"is_error":false}`)
	f.Add(`{"type":"weird","type2":"x"}`)
	f.Fuzz(func(t *testing.T, in string) {
		var b coachd.Block
		if json.Unmarshal([]byte(in), &b) != nil {
			return
		}
		out, err := json.Marshal(b)
		if err != nil {
			return // e.g. an input field that is not valid JSON on its own cannot exist here; marshal refuses what it cannot write
		}
		var b2 coachd.Block
		if err := json.Unmarshal(out, &b2); err != nil {
			t.Fatalf("re-decode %s: %v", out, err)
		}
		out2, _ := json.Marshal(b2)
		if string(out) != string(out2) {
			t.Fatalf("not stable:\n%s\n%s", out, out2)
		}
	})
}

func TestID(t *testing.T) {
	now := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	a, b := coachd.NewID("sess", now), coachd.NewID("sess", now.Add(time.Millisecond))
	if !coachd.ValidID("sess", a) || a >= b || a == coachd.NewID("sess", now) {
		t.Fatalf("ids %s %s", a, b)
	}
	for _, bad := range []string{"", "sess_", "note_" + a[5:], a + "x", strings.ToUpper(a), "sess_../../../etc/passwd00000", "sess_" + strings.Repeat("u", 26)} {
		if coachd.ValidID("sess", bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzParseRateLimit(f *testing.F) {
	for _, s := range []string{"20/60s", "off", "1/1s", "5/1h30m", "0/60s", "x", "3/", "/1s", "9223372036854775807/1s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := coachd.ParseRateLimit(s)
		if err != nil || s == "off" {
			return
		}
		if r.N <= 0 || r.Per < time.Second {
			t.Fatalf("%q parsed to %+v", s, r)
		}
		back, err := coachd.ParseRateLimit(r.String())
		if err != nil || back != r {
			t.Fatalf("%q -> %q -> %+v, %v", s, r.String(), back, err)
		}
	})
}

// TestBlockAsIs: a block AsIs takes is written by json.Marshal as
// AppendJSON writes it. It refuses a block json.Marshal would change
// (spaces, characters it escapes) or refuse (invalid or empty raw JSON,
// no type).
func TestBlockAsIs(t *testing.T) {
	for _, c := range []struct {
		name string
		b    coachd.Block
		want bool
	}{
		{"text", coachd.TextBlock("a <b> & \u2028 \"c\" \xff"), true},
		{"tool_use clean", coachd.Block{Type: coachd.BlockToolUse, ID: "t", Name: "n", Input: json.RawMessage(`{"a":[1,"\u003c"]}`)}, true},
		{"tool_use no input", coachd.Block{Type: coachd.BlockToolUse, ID: "t", Name: "n"}, true},
		{"tool_result clean", coachd.ToolResultBlock("t", "<ok>", false), true},
		{"image clean", coachd.Block{Type: coachd.BlockImage, Source: json.RawMessage(`{"type":"url","url":"x"}`)}, true},
		{"extra clean", coachd.Block{Type: coachd.BlockText, Text: "x", Extra: map[string]json.RawMessage{"cache_control": json.RawMessage(`{"type":"ephemeral"}`), "type": nil}}, true},
		{"no type", coachd.Block{Text: "x"}, false},
		{"input with spaces", coachd.Block{Type: coachd.BlockToolUse, ID: "t", Name: "n", Input: json.RawMessage(`{ "a": 1 }`)}, false},
		{"input with <", coachd.Block{Type: coachd.BlockToolUse, ID: "t", Name: "n", Input: json.RawMessage(`{"a":"<"}`)}, false},
		{"input invalid", coachd.Block{Type: coachd.BlockToolUse, ID: "t", Name: "n", Input: json.RawMessage(`{"a":`)}, false},
		{"content with U+2029", coachd.Block{Type: coachd.BlockToolResult, ToolUseID: "t", Content: json.RawMessage("\"a\u2029\"")}, false},
		{"source with newline", coachd.Block{Type: coachd.BlockDocument, Source: json.RawMessage("{\n}")}, false},
		{"extra empty", coachd.Block{Type: coachd.BlockText, Extra: map[string]json.RawMessage{"k": nil}}, false},
		{"extra with &", coachd.Block{Type: coachd.BlockText, Extra: map[string]json.RawMessage{"k": json.RawMessage(`"&"`)}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.b.AsIs(); got != c.want {
				t.Fatalf("AsIs = %v, want %v", got, c.want)
			}
			if c.want {
				asIs(t, c.b)
			}
		})
	}
}

// asIs fails t unless json.Marshal writes b as AppendJSON does.
func asIs(t *testing.T, b coachd.Block) {
	t.Helper()
	want, err := json.Marshal(b)
	if err != nil {
		t.Fatalf("json.Marshal: %v", err)
	}
	got, err := b.AppendJSON(nil)
	if err != nil || string(got) != string(want) {
		t.Fatalf("AppendJSON = %s, %v; json.Marshal = %s", got, err, want)
	}
}

// FuzzBlockAsIs: whatever raw JSON a block holds, AsIs takes it only if
// json.Marshal writes the block as AppendJSON does.
func FuzzBlockAsIs(f *testing.F) {
	f.Add("tool_use", "x", `{"a":1}`, "k", `"v"`)
	f.Add("tool_result", "<", `"a\u2028"`, "", ``)
	f.Add("image", "", `{ "a" : 1 }`, "type", `{`)
	f.Add("text", "\xff", ``, "cache_control", `{"type":"ephemeral"}`)
	f.Fuzz(func(t *testing.T, typ, text, raw, key, extra string) {
		b := coachd.Block{Type: typ, Text: text, ID: text, Name: text, Input: json.RawMessage(raw),
			ToolUseID: text, Content: json.RawMessage(raw), Source: json.RawMessage(raw)}
		if key != "" {
			b.Extra = map[string]json.RawMessage{key: json.RawMessage(extra)}
		}
		if b.AsIs() {
			asIs(t, b)
		}
	})
}

// TestBlockUnmarshalCopiesOnce: reading a stored message copied each raw
// field of its blocks twice (encoding/json's copy into the field map,
// then another): a photo's 4 MiB of base64 became 8 MiB on every read of
// the session. The map's copy is the block's.
func TestBlockUnmarshalCopiesOnce(t *testing.T) {
	photo := coachd.AttachmentBlock(coachd.MediaPDF, "plan.pdf", append([]byte("%PDF-1.4\n"), bytes.Repeat([]byte("x"), 3<<20)...))
	data, err := json.Marshal(photo)
	if err != nil {
		t.Fatal(err)
	}
	var b coachd.Block
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err = json.Unmarshal(data, &b)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > uint64(len(data))*3/2 {
		t.Errorf("decoding a block of %d KB allocated %d KB", len(data)>>10, n>>10)
	}
	if !bytes.Equal(b.Source, photo.Source) || b.Type != photo.Type || string(b.Extra["title"]) != string(photo.Extra["title"]) {
		t.Errorf("decoded %s %s %s", b.Type, b.Source[:32], b.Extra["title"])
	}
}

package coachd

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain words ", "quote \" and \\ backslash", "\n\r\t\b\f\x00\x1f\x7f",
		"<b>&amp;</b>", "héllo wörld 日本語 🚀", "\u2028\u2029", "bad \xff\xfe utf8 \xe2\x80", "\xed\xa0\x80 surrogate"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		got := appendJSONString([]byte("x"), s)
		if !bytes.Equal(got, append([]byte("x"), want...)) {
			t.Fatalf("appendJSONString(%q) = %s, json.Marshal: %s", s, got[1:], want)
		}
	})
}

// marshalPerField is Block.MarshalJSON as it was before it appended into
// one buffer: each string through json.Marshal. The bytes must not change.
func marshalPerField(b Block) []byte {
	var buf bytes.Buffer
	str := func(s string) { raw, _ := json.Marshal(s); buf.Write(raw) }
	buf.WriteString(`{"type":`)
	str(b.Type)
	field := func(name, v string) { buf.WriteString(`,"` + name + `":`); str(v) }
	rawField := func(name string, raw json.RawMessage, def string) {
		if len(raw) == 0 {
			if def == "" {
				return
			}
			raw = json.RawMessage(def)
		}
		buf.WriteString(`,"` + name + `":`)
		buf.Write(raw)
	}
	switch b.Type {
	case BlockText:
		field("text", b.Text)
	case BlockThinking:
		field("thinking", b.Thinking)
		field("signature", b.Signature)
	case BlockRedactedThinking:
		field("data", b.Data)
	case BlockToolUse:
		field("id", b.ID)
		field("name", b.Name)
		rawField("input", b.Input, "{}")
	case BlockToolResult:
		field("tool_use_id", b.ToolUseID)
		rawField("content", b.Content, "")
		if b.IsError {
			buf.WriteString(`,"is_error":true`)
		}
	case BlockImage, BlockDocument:
		rawField("source", b.Source, "")
	}
	keys := make([]string, 0, len(b.Extra))
	for k := range b.Extra {
		if k != "type" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		buf.WriteByte(',')
		str(k)
		buf.WriteByte(':')
		buf.Write(b.Extra[k])
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

func FuzzBlockMarshalBytes(f *testing.F) {
	for _, typ := range []string{BlockText, BlockThinking, BlockRedactedThinking, BlockToolUse, BlockToolResult, BlockImage, "server_tool_use"} {
		f.Add(typ, "a <b> & \"c\"\n", "sig\u2028", "id_1", `{"q":"<x>"}`, "k\xff", true)
	}
	f.Add(BlockToolUse, "", "", "", "", "", false)
	f.Fuzz(func(t *testing.T, typ, text, sig, id, raw, key string, isErr bool) {
		if typ == "" {
			return
		}
		b := Block{Type: typ, Text: text, Thinking: text, Signature: sig, Data: text, ID: id, Name: sig,
			Input: json.RawMessage(raw), ToolUseID: id, Content: json.RawMessage(raw), IsError: isErr, Source: json.RawMessage(raw)}
		if key != "" {
			b.Extra = map[string]json.RawMessage{key: json.RawMessage(`1`), "type": json.RawMessage(`"x"`), "cache_control": json.RawMessage(`{"type":"ephemeral"}`)}
		}
		got, err := b.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if want := marshalPerField(b); !bytes.Equal(got, want) {
			t.Fatalf("MarshalJSON = %s\nwant         %s", got, want)
		}
	})
}

func BenchmarkBlockMarshal(b *testing.B) {
	blk := Block{Type: BlockToolUse, ID: "toolu_01", Name: "save_note", Input: json.RawMessage(`{"text":"airport queue at 6am"}`),
		Extra: map[string]json.RawMessage{"cache_control": json.RawMessage(`{"type":"ephemeral"}`)}}
	text := TextBlock("message 12 of a long session about shifts, airports & surge pricing")
	for b.Loop() {
		if _, err := json.Marshal([]Block{blk, text}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendJSONString: a streamed text delta, a paragraph of a
// coach's reply with quotes and a line break, and the same in French.
func BenchmarkAppendJSONString(b *testing.B) {
	for _, c := range []struct{ name, s string }{
		{"delta", " your best hours are"},
		{"paragraph", strings.Repeat(`Airport queues are shortest before 6am; the "cell lot" fills by 7.`+"\n", 4)},
		{"accents", strings.Repeat("Les files à l'aéroport sont plus courtes avant 6 h ; le « parking » se remplit vers 7 h.\n", 4)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.s)))
			buf := make([]byte, 0, 1024)
			for b.Loop() {
				buf = AppendJSONString(buf[:0], c.s, true)
			}
		})
	}
}

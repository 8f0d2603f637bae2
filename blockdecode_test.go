package coachd

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// slowBlock reads a block through encoding/json alone: the oracle the
// fast path must agree with.
type slowBlock Block

func (s *slowBlock) UnmarshalJSON(data []byte) error { return (*Block)(s).unmarshalSlow(data) }

// blockTexts are blocks and arrays of blocks at the edges of what the
// fast path takes and what it sends the slow way.
var blockTexts = []string{
	`[]`, ` [ ] `, `null`, `[null]`, `{}`, `[{}]`, `[1]`, `["a"]`, `[{"type":"text","text":"hi"}]`,
	` [ { "type" : "text" , "text" : "hi" , "citations" : [ { "a" : 1 } ] } , {"type":"text","text":""} ] `,
	`[{"type":"text","text":"line\nnext \"quoted\" \\ \u00e9 \ud83d\ude00"}]`,
	`[{"type":"text","text":"caf` + "\xc3\xa9" + `","x":"` + "\xff" + `"}]`,
	`[{"type":"text","text":"` + "b\xffad" + `"}]`, `[{"type":"text","text":"a","text":"b"}]`, `[{"type":"text","type":"image"}]`,
	`[{"type":"text","text":"hi","x":"a\"b","y":"c\\","z":"\\\"","w":["\"]"],"v":{"\"}":"}"}}]`,
	`[{"type":"text","k` + "\xff" + `":1}]`, "[{\"type\":\"text\",\"n\":1 ,\"m\":true\t,\"o\":null\n}]",
	`[{"typ\u0065":"text","text":"escaped key"}]`, `[{"type":"text","t` + "\xc3\xa9" + `xt":"key past ASCII"}]`,
	`[{"type":"text","text":null}]`, `[{"type":"text","text":1}]`, `[{"type":1}]`, `[{"type":""}]`, `[{"text":"no type"}]`,
	`[{"type":"tool_use","id":"toolu_1","name":"save_note","input":{"a":[1,2.5e3,-0,true,false,null,"}"],"b":{}}}]`,
	`[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"ok"}],"is_error":true}]`,
	`[{"type":"tool_result","tool_use_id":"toolu_1","content":"plain","is_error":"yes"}]`,
	`[{"type":"image","source":{"data":"/9j/4AAQ` + strings.Repeat("QUJD", 40) + `==","media_type":"image/jpeg","type":"base64"}}]`,
	`[{"type":"document","source":{"type":"text","media_type":"text/plain","data":"a \"b\" \\"},"title":"plan.txt","cache_control":{"type":"ephemeral"}}]`,
	`[{"type":"thinking","thinking":"hm","signature":"c2ln"},{"type":"redacted_thinking","data":"ZGF0YQ=="}]`,
	`[{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"q"}}]`,
	`[{"type":"text","text":"a"},]`, `[{"type":"text","text":"a"}`, `[{"type":"text","text":"a"}] x`, `[{"type":"text" "text":"a"}]`,
	`[{"type":"text","text":"` + "a\x01b" + `"}]`, `[{"type":"text","n":1e400}]`, `[{"type":"text","n":-12.5E-3,"m":0}]`,
}

// TestUnmarshalBlocks: the fast path and encoding/json agree on each of
// blockTexts, result and error.
func TestUnmarshalBlocks(t *testing.T) {
	for _, s := range blockTexts {
		checkUnmarshalBlocks(t, []byte(s))
		checkBlockUnmarshal(t, []byte(s))
		if a := strings.TrimSpace(s); strings.HasPrefix(a, "[{") && strings.HasSuffix(a, "}]") {
			checkBlockUnmarshal(t, []byte(a[1:len(a)-1]))
		}
	}
}

// TestUnmarshalBlocksFast: the blocks a store keeps take the fast path:
// a photo, text with escapes, a tool call and its result. Were they all
// sent the slow way, TestUnmarshalBlocks would still pass.
func TestUnmarshalBlocksFast(t *testing.T) {
	photo := AttachmentBlock(MediaJPEG, "", append([]byte("\xff\xd8\xff"), bytes.Repeat([]byte("x"), 1<<20)...))
	blocks := []Block{photo, TextBlock("what about \"this\" corner?\n"), {Type: BlockToolUse, ID: "toolu_1", Name: "save_note",
		Input: json.RawMessage(`{"title":"x"}`)}, ToolResultBlock("toolu_1", `{"saved":true}`, false)}
	data, err := json.Marshal(blocks)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := decodeBlocks(data)
	if !ok {
		t.Fatal("stored blocks went the slow way")
	}
	var want []slowBlock
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, slowBlocks(want)) {
		t.Errorf("fast path read %+v", got[1:])
	}
	var b Block
	if !b.decodeObject(data[1:valueEnd(data, 1)], true) || !bytes.Equal(b.Source, photo.Source) {
		t.Error("a photo block went the slow way")
	}
}

func slowBlocks(s []slowBlock) []Block {
	if s == nil {
		return nil
	}
	out := make([]Block, len(s))
	for i := range s {
		out[i] = Block(s[i])
	}
	return out
}

// checkUnmarshalBlocks: UnmarshalBlocks reads data as encoding/json does.
func checkUnmarshalBlocks(t *testing.T, data []byte) {
	t.Helper()
	var want []slowBlock
	werr := json.Unmarshal(data, &want)
	got, gerr := UnmarshalBlocks(bytes.Clone(data))
	// The oracle's errors name its own type.
	if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != strings.ReplaceAll(werr.Error(), "slowBlock", "Block") {
		t.Fatalf("UnmarshalBlocks(%q): error %v, encoding/json's %v", data, gerr, werr)
	}
	if gerr == nil && !reflect.DeepEqual(got, slowBlocks(want)) {
		t.Fatalf("UnmarshalBlocks(%q) = %#v, encoding/json reads %#v", data, got, want)
	}
}

// checkBlockUnmarshal: Block.UnmarshalJSON reads data as encoding/json
// does, and keeps nothing of data.
func checkBlockUnmarshal(t *testing.T, data []byte) {
	t.Helper()
	var want Block
	werr := want.unmarshalSlow(data)
	in := bytes.Clone(data)
	var got Block
	gerr := got.UnmarshalJSON(in)
	if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
		t.Fatalf("UnmarshalJSON(%q): error %v, encoding/json's %v", data, gerr, werr)
	}
	for i := range in {
		in[i] = '#'
	}
	if gerr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("UnmarshalJSON(%q) = %#v (after its input changed), encoding/json reads %#v", data, got, want)
	}
}

// FuzzUnmarshalBlocks: UnmarshalBlocks agrees with encoding/json on
// anything.
func FuzzUnmarshalBlocks(f *testing.F) {
	for _, s := range blockTexts {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkUnmarshalBlocks(t, data) })
}

// FuzzBlockUnmarshal: Block.UnmarshalJSON agrees with encoding/json on
// anything, and keeps no byte of its input.
func FuzzBlockUnmarshal(f *testing.F) {
	for _, s := range blockTexts {
		if a := strings.TrimSpace(s); strings.HasPrefix(a, "[{") && strings.HasSuffix(a, "}]") {
			f.Add([]byte(a[1 : len(a)-1]))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkBlockUnmarshal(t, data) })
}

// BenchmarkUnmarshalBlocks: a stored message with a 3 MiB photo and its
// question, and a coach's round (text and a tool call), read as
// encoding/json read them before (slowBlock) and as the store reads them
// now.
func BenchmarkUnmarshalBlocks(b *testing.B) {
	photo := AttachmentBlock(MediaJPEG, "", append([]byte("\xff\xd8\xff"), bytes.Repeat([]byte("corner"), 3<<20/6)...))
	round := []Block{TextBlock("Airport queues are shortest before 6am.\nI'll note that."),
		{Type: BlockToolUse, ID: "toolu_01", Name: "save_note", Input: json.RawMessage(`{"title":"Airport runs","content":"Queues short before 6am","importance":70}`)}}
	for _, c := range []struct {
		name   string
		blocks []Block
	}{{"photo", []Block{photo, TextBlock("what about this corner?")}}, {"round", round}} {
		data, err := json.Marshal(c.blocks)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/encoding/json", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				var blocks []slowBlock
				if err := json.Unmarshal(data, &blocks); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/UnmarshalBlocks", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := UnmarshalBlocks(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package sqlstore

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/coachd/coachd"
)

// TestAppendBlocks: a message's blocks are stored as json.Marshal writes
// them, by appendBlocks when their raw JSON is clean and by json.Marshal
// otherwise, and a block json.Marshal refuses is refused.
func TestAppendBlocks(t *testing.T) {
	img := json.RawMessage(`{"type":"base64","media_type":"image/png","data":"AAAA"}`)
	for _, c := range []struct {
		name   string
		blocks []coachd.Block
		byHand bool
	}{
		{"Text", []coachd.Block{coachd.TextBlock("a <b> & \"c\"\n\u2028\xff")}, true},
		{"Every", []coachd.Block{
			{Type: coachd.BlockThinking, Thinking: "hmm", Signature: "sig"},
			{Type: coachd.BlockRedactedThinking, Data: "xyz"},
			{Type: coachd.BlockToolUse, ID: "toolu_1", Name: "save_note", Input: json.RawMessage(`{"k":"v w"}`)},
			{Type: coachd.BlockToolUse, ID: "toolu_2", Name: "x"},
			coachd.ToolResultBlock("toolu_1", "done <ok>", true),
			{Type: coachd.BlockImage, Source: img},
			{Type: coachd.BlockDocument, Source: img, Extra: map[string]json.RawMessage{"title": json.RawMessage(`"T"`), "cache_control": json.RawMessage(`{"type":"ephemeral"}`)}},
			{Type: "server_tool_use", Extra: map[string]json.RawMessage{"id": json.RawMessage(`"srv_1"`), "type": json.RawMessage(`"ignored"`)}},
		}, true},
		{"InputWithSpaces", []coachd.Block{{Type: coachd.BlockToolUse, ID: "t", Name: "n", Input: json.RawMessage(`{"k": 1}`)}}, false},
		{"SourceWithSpaces", []coachd.Block{{Type: coachd.BlockImage, Source: json.RawMessage(`{"type": "url"}`)}}, false},
		{"ContentWithHTML", []coachd.Block{{Type: coachd.BlockToolResult, ToolUseID: "t", Content: json.RawMessage(`"<b>"`)}}, false},
		{"ExtraWithSpaces", []coachd.Block{{Type: coachd.BlockText, Text: "x", Extra: map[string]json.RawMessage{"c": json.RawMessage(`[1, 2]`)}}}, false},
		{"InvalidInputOfText", []coachd.Block{{Type: coachd.BlockText, Text: "x", Input: json.RawMessage(`{`)}}, false},
		{"InvalidInput", []coachd.Block{{Type: coachd.BlockToolUse, ID: "t", Name: "n", Input: json.RawMessage(`{"k":`)}}, false},
		{"EmptyExtra", []coachd.Block{{Type: coachd.BlockText, Text: "x", Extra: map[string]json.RawMessage{"c": nil}}}, false},
		{"NoType", []coachd.Block{{Text: "x"}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			want, wantErr := json.Marshal(c.blocks)
			if _, ok := appendBlocks(nil, c.blocks); ok != c.byHand {
				t.Errorf("appendBlocks took them: %v, want %v", ok, c.byHand)
			}
			r, err := encodeMessage(0, &coachd.Message{Role: coachd.RoleAssistant, Blocks: c.blocks})
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("err %v, json.Marshal's %v", err, wantErr)
			}
			if err == nil && r.blocks != string(want) {
				t.Errorf("stored %s\nwant   %s", r.blocks, want)
			}
		})
	}
}

// TestAppendUsage: each field of coachd.Usage set alone is stored as
// json.Marshal writes it; a field added to Usage and not written fails.
func TestAppendUsage(t *testing.T) {
	typ := reflect.TypeOf(coachd.Usage{})
	for i := range typ.NumField() {
		for _, n := range []int64{0, 7, -3} {
			var u coachd.Usage
			reflect.ValueOf(&u).Elem().Field(i).SetInt(n)
			want, _ := json.Marshal(u)
			if got := appendUsage(nil, &u); string(got) != string(want) {
				t.Errorf("%s = %d: %s, want %s", typ.Field(i).Name, n, got, want)
			}
		}
	}
}

// FuzzAppendBlocks: whatever a block's strings and raw JSON hold,
// appendBlocks writes what json.Marshal writes, or leaves them to it.
func FuzzAppendBlocks(f *testing.F) {
	f.Add("text", "hello <b>", []byte(`{"k":"v"}`), []byte(`"done"`), "cache_control", []byte(`{"type":"ephemeral"}`))
	f.Add("tool_use", "\u2028\xff", []byte("{ \"k\" : 1 }"), []byte(`[{"type":"text","text":"x"}]`), "type", []byte(`"x"`))
	f.Add("tool_result", "", []byte(`"\u003c"`), []byte(`{`), "", []byte(nil))
	f.Fuzz(func(t *testing.T, typ, text string, input, content []byte, key string, extra []byte) {
		b := coachd.Block{Type: typ, Text: text, Name: text, ID: text, Thinking: text, Input: input, Content: content, Source: input}
		if key != "" {
			b.Extra = map[string]json.RawMessage{key: extra}
		}
		blocks := []coachd.Block{b, coachd.TextBlock(text)}
		got, ok := appendBlocks(nil, blocks)
		if !ok {
			return
		}
		want, err := json.Marshal(blocks)
		if err != nil {
			t.Fatalf("appendBlocks wrote %s where json.Marshal fails: %v", got, err)
		}
		if string(got) != string(want) {
			t.Fatalf("appendBlocks: %s\njson.Marshal: %s", got, want)
		}
	})
}

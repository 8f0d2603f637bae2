package anthropic

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/coachd/coachd"

	sdk "github.com/anthropics/anthropic-sdk-go"
)

// blockByUnmarshal is block as it was before plainBlock: every block's
// wire JSON decoded, the typed fields laid over.
func blockByUnmarshal(cb *sdk.ContentBlockUnion) (coachd.Block, bool) {
	var b coachd.Block
	if !decodeBlock([]byte(cb.RawJSON()), cb, &b) {
		return b, false
	}
	layOver(&b, cb)
	return b, true
}

// sameBlock decodes raw as the SDK does, lays text over it as deltas
// after the block's stop would, and wants block and blockByUnmarshal to
// agree; it reports whether plainBlock took it.
func sameBlock(t *testing.T, raw, text string) bool {
	t.Helper()
	var cb sdk.ContentBlockUnion
	if err := json.Unmarshal([]byte(raw), &cb); err != nil {
		return false
	}
	if text != "" {
		cb.Text, cb.Thinking = text, text
	}
	got, gotOK := block(&cb)
	want, wantOK := blockByUnmarshal(&cb)
	if gotOK != wantOK || !reflect.DeepEqual(got, want) {
		t.Fatalf("%s (text %q):\n got %+v %v\nwant %+v %v", raw, text, got, gotOK, want, wantOK)
	}
	_, plain := plainBlock([]byte(cb.RawJSON()))
	return plain || plainToolUse([]byte(cb.RawJSON()), &cb)
}

// TestPlainBlock: the blocks plainBlock takes convert as decoding them
// would, and the ones it leaves are decoded.
func TestPlainBlock(t *testing.T) {
	for _, c := range []struct {
		raw   string
		plain bool
	}{
		{`{"type":"text","text":"Hello <there> \u00e9\n"}`, true},
		{` { "text" : "a" , "type" : "text" } `, true},
		{`{"type":"text"}`, true},
		{`{"type":"thinking","thinking":"hmm","signature":"c2ln"}`, true},
		{`{"type":"text","text":"a","citations":null}`, false},
		{`{"type":"text","text":"a","citations":[{"type":"char_location","cited_text":"x"}]}`, false},
		{`{"type":"text","text":"a","text":"b"}`, false},
		{`{"type":"text","thinking":"a"}`, false},
		{`{"type":"thinking","thinking":"a","text":"b"}`, false},
		{`{"type":"tool_use","id":"toolu_1","name":"n","input":{}}`, false}, // not the SDK's order
		{`{"id":"toolu_1","input":{"a":1,"b":["x"]},"name":"save_note","type":"tool_use"}`, true},
		{`{"id":"toolu_1","input":{},"name":"n","type":"tool_use"}`, true},
		{`{"id":"toolu_1","input":{"a": 1},"name":"n","type":"tool_use"}`, true},
		{`{"id":"toolu_1","input":{"a":1},"name":"n","type":"tool_use","caller":{"type":"direct"}}`, false},
		{`{"caller":{"type":"direct"},"id":"toolu_1","input":{"a":1},"name":"n","type":"tool_use"}`, false},
		{`{"id":"to\u006flu_1","input":{},"name":"n","type":"tool_use"}`, false},
		{`{"id":"toolu_1","input":{},"name":"n\u003c","type":"tool_use"}`, false},
		{`{"id":"toolu_1","input":{},"name":"n<","type":"tool_use"}`, false},
		{`{"id":"toolu_1","input":{},"name":"né","type":"tool_use"}`, false},
		{`{"id":"toolu_1","input":[1],"name":"n","type":"tool_use"}`, true},
		{`{"id":"toolu_1","input":"x","name":"n","type":"tool_use"}`, true},
		{`{"id":"toolu_1","input":{},"name":"n","type":"server_tool_use"}`, false},
		{`{"id":"toolu_1","input":{},"type":"tool_use"}`, false},
		{`{"id":5,"input":{},"name":"n","type":"tool_use"}`, false},
		{`{"type":"te\u0078t","text":"a"}`, false},
		{`{"type":"text","text":5}`, false},
		{`{"type":"redacted_thinking","data":"x"}`, false},
		{`{"text":"a"}`, false},
		{`{}`, false},
		{`{"type":"text","text":"\ud800"}`, false},
	} {
		for _, text := range []string{"", "later text", "\xff"} {
			if got := sameBlock(t, c.raw, text); got != c.plain {
				t.Errorf("%s: taken by plainBlock: %v, want %v", c.raw, got, c.plain)
			}
		}
	}
}

// FuzzPlainBlock: whatever a block's wire JSON, block converts it as
// decoding it would.
func FuzzPlainBlock(f *testing.F) {
	f.Add(`{"type":"text","text":"Hello"}`, "")
	f.Add(`{"type":"thinking","thinking":"a\"b","signature":"s"}`, "more")
	f.Add(`{"type":"text","text":"a","extra":{"k":[1,2]}}`, "")
	f.Add(`{"id":"toolu_1","input":{"a":1},"name":"save_note","type":"tool_use"}`, "")
	f.Add(`{"id":"toolu_1","input":{"a":1},"name":"n","type":"tool_use","caller":{"type":"direct"}}`, "")
	f.Fuzz(func(t *testing.T, raw, text string) {
		sameBlock(t, raw, text)
	})
}

// BenchmarkBlockToolUse converts a tool call's block as a reply's end
// does: taken as the SDK wrote it (block) against decoded (as before).
//
//	go test ./anthropic -run '^$' -bench BlockToolUse -benchmem
func BenchmarkBlockToolUse(b *testing.B) {
	var cb sdk.ContentBlockUnion
	raw := `{"id":"toolu_01A09q90qw90lq917835lq9","input":{"note_type":"insight","title":"Load test","content":"The user asked for a load test."},"name":"save_note","type":"tool_use"}`
	if err := json.Unmarshal([]byte(raw), &cb); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		conv func(*sdk.ContentBlockUnion) (coachd.Block, bool)
	}{{"block", block}, {"decoded", blockByUnmarshal}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := c.conv(&cb); !ok {
					b.Fatal("not converted")
				}
			}
		})
	}
}

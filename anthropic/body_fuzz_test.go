package anthropic

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/coachd/coachd"
)

// FuzzBody holds the body coachd writes to the SDK's encoding of the same
// request (bodies, the oracle in body_internal_test.go): text, raw JSON
// and names from the fuzzer land in every kind of field and block. The
// one difference allowed is strictness: a raw field that is not one JSON
// value alone (say `1,"x":2`, which made a whole block valid) is refused
// by coachd, where the SDK sent it.
//
//	go test ./anthropic -run '^$' -fuzz FuzzBody -fuzztime 60s
func FuzzBody(f *testing.F) {
	f.Add("Hello", []byte(`{"q":"x"}`), []byte(`"done"`), "save_note", 0.5, uint8(0))
	f.Add("a <b> & \u2028 \xff\x01", []byte("{ \"q\" : [1, 2.5e3, true, null] }\n"), []byte(`[{"type":"text","text":"<x>"}]`), "n\"<", 1e-9, uint8(0xff))
	f.Add("", []byte(`1,"x":2`), []byte(``), "", -0.0, uint8(7))
	f.Fuzz(func(t *testing.T, text string, raw1, raw2 []byte, name string, temp float64, flags uint8) {
		req := fuzzRequest(text, raw1, raw2, name, temp, flags)
		cfg := Config{NoCache: flags&0x40 != 0}
		old, now, oldErr, nowErr := bodies(t, cfg, "", req, flags&0x80 != 0)
		switch {
		case oldErr != nil && nowErr == nil:
			t.Fatalf("the SDK refused (%v), coachd sent %s", oldErr, now)
		case oldErr == nil && nowErr != nil:
			if (len(raw1) == 0 || json.Valid(raw1)) && (len(raw2) == 0 || json.Valid(raw2)) {
				t.Fatalf("coachd refused (%v), the SDK sent %s", nowErr, old)
			}
		case oldErr == nil && !bytes.Equal(old, now):
			t.Fatalf("body\n got %s\nwant %s", now, old)
		}
	})
}

// fuzzRequest spreads the fuzzer's values over a request; flags pick the
// optional parts.
func fuzzRequest(text string, raw1, raw2 []byte, name string, temp float64, flags uint8) *coachd.ModelRequest {
	r1, r2 := json.RawMessage(raw1), json.RawMessage(raw2)
	tb := coachd.TextBlock(text)
	if flags&1 != 0 {
		tb.Extra = map[string]json.RawMessage{name: r2}
	}
	req := &coachd.ModelRequest{
		Model: name, MaxTokens: int64(flags) - 3,
		System: []coachd.Block{coachd.TextBlock(text), tb},
		Messages: []coachd.ModelMessage{
			{Role: coachd.RoleUser, Blocks: []coachd.Block{tb, {Type: coachd.BlockImage, Source: r1}}},
			{Role: coachd.Role(name), Blocks: []coachd.Block{
				{Type: coachd.BlockThinking, Thinking: text, Signature: name},
				{Type: coachd.BlockRedactedThinking, Data: text},
				{Type: coachd.BlockToolUse, ID: name, Name: text, Input: r1},
				{Type: name, Text: text, Extra: map[string]json.RawMessage{"a": r1}}}},
			{Role: coachd.RoleUser, Blocks: []coachd.Block{
				{Type: coachd.BlockToolResult, ToolUseID: name, Content: r2, IsError: flags&2 != 0},
				{Type: coachd.BlockDocument, Source: r2}}},
		},
		TailBlocks: int(flags>>4) & 3,
	}
	if flags&4 != 0 {
		req.Tools = []coachd.ToolSpec{{Name: name, Description: text, InputSchema: r1}, {Name: text}}
		req.ToolChoice = &coachd.ToolChoice{Type: name, Name: text, DisableParallelToolUse: flags&8 != 0}
	}
	if flags&8 != 0 {
		req.Temperature = &temp
		req.StopSequences = []string{text, name}
		req.UserID = text
		req.ThinkingBudget = int64(len(text)) + 1
	}
	if flags&0x20 != 0 {
		req.System = nil
	}
	return req
}

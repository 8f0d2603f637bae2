package agent

import (
	"bytes"
	"encoding/json"
	"runtime"
	"testing"

	"github.com/coachd/coachd"
)

// FuzzMessagesJSONLen holds messagesJSONLen to len(json.Marshal): the
// size estimate of a request stays what it was when it marshalled.
func FuzzMessagesJSONLen(f *testing.F) {
	f.Add("user", "hi <there> & \"you\"\n\u2028", `{ "q" : "<x>" , "n": [1, 2] }`, "cache_control", true)
	f.Add("assistant", "bad \xff utf8", `"a string"`, "", false)
	f.Add("us\x01er", "", `{`, "k", true)
	f.Add("", "text", ``, "\u2029", false)
	f.Fuzz(func(t *testing.T, role, text, raw, key string, nilBlocks bool) {
		blocks := []coachd.Block{
			coachd.TextBlock(text),
			{Type: coachd.BlockToolUse, ID: text, Name: "n", Input: json.RawMessage(raw)},
			{Type: coachd.BlockToolResult, ToolUseID: "t", Content: json.RawMessage(raw), IsError: true},
			{Type: coachd.BlockImage, Source: json.RawMessage(raw)},
			{Type: coachd.BlockText, Text: text, Source: json.RawMessage(raw)}, // a source no text block writes
		}
		if key != "" {
			blocks[3].Extra = map[string]json.RawMessage{key: json.RawMessage(raw)}
			blocks[0].Extra = map[string]json.RawMessage{key: json.RawMessage(raw)}
		}
		msgs := []coachd.ModelMessage{{Role: coachd.Role(role), Blocks: blocks}, {Role: coachd.RoleAssistant}}
		if !nilBlocks {
			msgs[1].Blocks = []coachd.Block{}
		}
		want, _ := json.Marshal(msgs)
		if got := messagesJSONLen(msgs); got != len(want) {
			t.Errorf("messagesJSONLen = %d, len(json.Marshal) = %d: %s", got, len(want), want)
		}
		var none []coachd.ModelMessage
		if got, want := messagesJSONLen(none), len("null"); got != want {
			t.Errorf("nil: %d, want %d", got, want)
		}
	})
}

// TestMessagesJSONLenNoPhotoCopy: a turn's size estimate appended each
// re-sent photo's source (megabytes of base64) into a scratch buffer to
// take its length: a copy of every photo, and a buffer as large as the
// largest. A source written as it is is measured, not copied.
func TestMessagesJSONLenNoPhotoCopy(t *testing.T) {
	var msgs []coachd.ModelMessage
	for i := range 3 {
		photo := coachd.AttachmentBlock(coachd.MediaJPEG, "", append([]byte("\xff\xd8\xff"), bytes.Repeat([]byte{byte(i)}, 3<<20)...))
		msgs = append(msgs, coachd.ModelMessage{Role: coachd.RoleUser, Blocks: []coachd.Block{photo, coachd.TextBlock("this one?")}},
			coachd.ModelMessage{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("noted")}})
	}
	want, _ := json.Marshal(msgs)
	var got int
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got = messagesJSONLen(msgs)
	runtime.ReadMemStats(&after)
	if got != len(want) {
		t.Errorf("messagesJSONLen = %d, len(json.Marshal) = %d", got, len(want))
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
		t.Errorf("messagesJSONLen allocated %d KB for 3 photos of 3 MiB", n>>10)
	}
}

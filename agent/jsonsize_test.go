package agent

import (
	"encoding/json"
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
		}
		if key != "" {
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

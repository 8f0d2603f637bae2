package anthropic

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/coachd/coachd"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/param"
)

// TestParamsBodyBytes: blocks handed to the SDK as themselves (encoded
// once, when the body is written) give the same request body, byte for
// byte, as blocks encoded with json.Marshal into raw overrides first:
// raw inputs with spaces and HTML characters are compacted and escaped
// the same way, Extra keys are sorted the same way.
func TestParamsBodyBytes(t *testing.T) {
	m := New(Config{APIKey: "k"})
	in := json.RawMessage("{ \"q\" : \"<a & b>\",\n \"n\": [1, 2] }")
	cached := coachd.TextBlock("cached\u2028 <b>")
	cached.Extra = map[string]json.RawMessage{"cache_control": json.RawMessage(`{ "type": "ephemeral" }`), "citations": json.RawMessage(`[ ]`)}
	req := &coachd.ModelRequest{
		MaxTokens: 100,
		System:    []coachd.Block{coachd.TextBlock("You are <a> coach & \"friend\"."), cached},
		Messages: []coachd.ModelMessage{
			{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("hi\n\t\x01"), cached}},
			{Role: coachd.RoleAssistant, Blocks: []coachd.Block{{Type: coachd.BlockToolUse, ID: "toolu_1", Name: "n", Input: in},
				{Type: "server_tool_use", Extra: map[string]json.RawMessage{"z": json.RawMessage(` 1 `), "a": in}}}},
			{Role: coachd.RoleUser, Blocks: []coachd.Block{{Type: coachd.BlockToolResult, ToolUseID: "toolu_1", Content: in, IsError: true}}},
			{Role: coachd.RoleUser},
		},
		NoCache: true,
	}
	p, err := m.params(req)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	// The way params built them before: each block through json.Marshal.
	old := p
	old.System, old.Messages = nil, nil
	for _, b := range req.System {
		raw, _ := json.Marshal(b)
		old.System = append(old.System, param.Override[sdk.TextBlockParam](json.RawMessage(raw)))
	}
	for _, msg := range req.Messages {
		mp := sdk.MessageParam{Role: sdk.MessageParamRole(msg.Role)}
		for _, b := range msg.Blocks {
			raw, _ := json.Marshal(b)
			mp.Content = append(mp.Content, param.Override[sdk.ContentBlockParamUnion](json.RawMessage(raw)))
		}
		old.Messages = append(old.Messages, mp)
	}
	want, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("body\n got %s\nwant %s", got, want)
	}

	t.Run("ErrUntyped", func(t *testing.T) {
		bad := *req
		bad.Messages = []coachd.ModelMessage{{Role: coachd.RoleUser, Blocks: []coachd.Block{{Text: "no type"}}}}
		if _, err := m.params(&bad); coachd.ErrorCode(err) != coachd.EINVALID {
			t.Errorf("err = %v, want EINVALID", err)
		}
	})
}

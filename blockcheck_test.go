package coachd_test

import (
	"encoding/json"
	"testing"

	"github.com/coachd/coachd"
)

// TestRecordBlocks: the blocks seed 000's loop records as the SDK gives
// them ("content_blocks: finalMessage.content" with thinking on, "content:
// result.result", a "text: pendingUserMessage" left empty; seed 000 lines
// 595-663) are made safe to replay rather than refused, and what cannot
// be made safe is refused as CheckBlocks refuses it, named by its index
// as sent.
func TestRecordBlocks(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		for _, tc := range []struct {
			role      coachd.Role
			raw, want string
		}{
			// As they are.
			{coachd.RoleUser, `[{"type":"text","text":"hi"}]`, `[{"type":"text","text":"hi"}]`},
			{coachd.RoleUser, `[{"type":"tool_result","tool_use_id":"t1","content":"x"}]`, `[{"type":"tool_result","tool_use_id":"t1","content":"x"}]`},
			{coachd.RoleUser, `[{"type":"tool_result","tool_use_id":"t1","content":[]}]`, `[{"type":"tool_result","tool_use_id":"t1","content":[]}]`},
			{coachd.RoleUser, `[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"x"}]}]`, `[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"x"}]}]`},
			// Thinking and blank text left out.
			{coachd.RoleAssistant, `[{"type":"thinking","thinking":"t","signature":"c2ln"},{"type":"text","text":"ok","citations":null}]`, `[{"type":"text","text":"ok","citations":null}]`},
			{coachd.RoleAssistant, `[{"type":"redacted_thinking","data":"ZGF0YQ=="},{"type":"tool_use","id":"t1","name":"n","input":{}}]`, `[{"type":"tool_use","id":"t1","name":"n","input":{}}]`},
			{coachd.RoleAssistant, `[{"type":"thinking","thinking":"t","signature":"c2ln"}]`, `[]`},
			{coachd.RoleUser, `[{"type":"text","text":""}]`, `[]`},
			{coachd.RoleUser, `[{"type":"text","text":" \n\t"},{"type":"text","text":"hi"}]`, `[{"type":"text","text":"hi"}]`},
			// A tool_result's value as its JSON text.
			{coachd.RoleUser, `[{"type":"tool_result","tool_use_id":"t1","content":{ "error" : "Tool execution failed" }}]`, `[{"type":"tool_result","tool_use_id":"t1","content":"{\"error\":\"Tool execution failed\"}"}]`},
			{coachd.RoleUser, `[{"type":"tool_result","tool_use_id":"t1","content":[1,"a"],"is_error":true}]`, `[{"type":"tool_result","tool_use_id":"t1","content":"[1,\"a\"]","is_error":true}]`},
			{coachd.RoleUser, `[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"tip","title":"x"}]}]`, `[{"type":"tool_result","tool_use_id":"t1","content":"[{\"type\":\"tip\",\"title\":\"x\"}]"}]`},
			{coachd.RoleUser, `[{"type":"tool_result","tool_use_id":"t1","content":false}]`, `[{"type":"tool_result","tool_use_id":"t1","content":"false"}]`},
			{coachd.RoleUser, `[{"type":"tool_result","tool_use_id":"t1","content":null}]`, `[{"type":"tool_result","tool_use_id":"t1"}]`},
		} {
			got, errs := coachd.RecordBlocks(tc.role, decodeBlocks(t, tc.raw))
			if len(errs) > 0 {
				t.Errorf("%s %s: %+v", tc.role, tc.raw, errs)
			}
			if b, _ := json.Marshal(got); string(b) != tc.want {
				t.Errorf("%s %s:\n got %s\nwant %s", tc.role, tc.raw, b, tc.want)
			}
			if errs := coachd.CheckBlocks(tc.role, got); len(errs) > 0 {
				t.Errorf("%s %s: the result fails CheckBlocks: %+v", tc.role, tc.raw, errs)
			}
		}
	})
	t.Run("Refused", func(t *testing.T) {
		for _, tc := range []struct {
			role  coachd.Role
			raw   string
			field string
		}{
			{coachd.RoleUser, `[{"type":"thinking","thinking":"t","signature":"forged"}]`, "[0].type"},
			{coachd.RoleAssistant, `[{"type":"thinking","thinking":"t","signature":"c2ln"},{"type":"tool_use","id":"","name":"n"}]`, "[1].id"},
			{coachd.RoleUser, `[{"type":"text","text":""},{"type":"tool_result","tool_use_id":"t1","content":[{"type":"image","source":{"type":"url","url":"https://example.com/a.png"}}]}]`, "[1].content[0].source.type"},
			{coachd.RoleUser, `[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":""}]}]`, "[0].content[0].text"},
			{coachd.RoleUser, `[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"x"},{"type":"banana"}]}]`, "[0].content[1].type"},
			{coachd.RoleAssistant, `[{"type":"text","text":"ok","cache_control":{"type":"ephemeral"}}]`, "[0].cache_control"},
		} {
			_, errs := coachd.RecordBlocks(tc.role, decodeBlocks(t, tc.raw))
			if len(errs) == 0 || errs[0].Field != tc.field || errs[0].Code == "" || errs[0].Message == "" {
				t.Errorf("%s %s: %+v, want %q first", tc.role, tc.raw, errs, tc.field)
			}
		}
	})
}

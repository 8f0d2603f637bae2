package coachd_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/coachd/coachd"
)

// TestSecurityCheckBlocks is issue 20 finding 9 in the domain: the
// blocks an external loop records are checked with the Messages API's
// rules. The server's TestSecurityRecordBlocks shows each refusal end to
// end; this shows what is accepted, and the field each refusal names.
func TestSecurityCheckBlocks(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		for _, tc := range []struct {
			role coachd.Role
			raw  string
		}{
			{coachd.RoleUser, `[{"type":"text","text":"hi","citations":null}]`},
			{coachd.RoleAssistant, `[{"type":"text","text":"Let me save that."},{"type":"tool_use","id":"toolu_01A-b","name":"save_note","input":{"title":"x"}},{"type":"tool_use","id":"call_2","name":"list_notes"}]`},
			{coachd.RoleUser, `[{"type":"tool_result","tool_use_id":"toolu_01A-b","content":"{\"ok\":true}"},{"type":"tool_result","tool_use_id":"call_2","is_error":true}]`},
			{coachd.RoleUser, `[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"chart:"},{"type":"image","source":{"type":"base64","media_type":"image/webp","data":"UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA=="}}]}]`},
			{coachd.RoleUser, `[{"type":"document","title":"plan","source":{"type":"text","media_type":"text/plain","data":"Mornings."}},{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0="}}]`},
			{coachd.RoleUser, `[{"type":"document","title":null,"context":"from the coach","citations":{"enabled":true},"source":{"type":"text","media_type":"text/plain","data":"x"}}]`},
			{coachd.RoleAssistant, `[{"type":"text","text":"Mornings.","citations":[{"type":"char_location","cited_text":"Mornings.","document_index":0,"start_char_index":0,"end_char_index":9}]}]`},
		} {
			if errs := coachd.CheckBlocks(tc.role, decodeBlocks(t, tc.raw)); len(errs) > 0 {
				t.Errorf("%s %s: %+v", tc.role, tc.raw, errs)
			}
		}
	})
	t.Run("Refused", func(t *testing.T) {
		for _, tc := range []struct {
			role  coachd.Role
			raw   string
			field string
		}{
			{coachd.RoleAssistant, `[{"type":"text","text":"ok"},{"type":"thinking","thinking":"t","signature":"forged"}]`, "[1].type"},
			{coachd.RoleAssistant, `[{"type":"tool_use","id":"t1","name":"n","input":[1]}]`, "[0].input"},
			{coachd.RoleAssistant, `[{"type":"tool_use","id":"","name":"n"}]`, "[0].id"},
			{coachd.RoleUser, `[{"type":"tool_result","tool_use_id":"t1","content":{"text":"x"}}]`, "[0].content"},
			{coachd.RoleUser, `[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"tool_result","tool_use_id":"t2"}]}]`, "[0].content[0].type"},
			{coachd.RoleUser, `[{"type":"image"}]`, "[0].source"},
			{coachd.RoleUser, `[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBO","extra":1}}]`, "[0].source"},
			{coachd.RoleUser, `[{"type":"image","source":{"type":"base64","media_type":"image/png","data":""}}]`, "[0].source.data"},
			{coachd.RoleUser, `[{"type":"document","source":{"type":"url","url":"https://example.com/a.pdf"}}]`, "[0].source.type"},
			{coachd.RoleUser, `[{"type":"document","source":{"type":"base64","media_type":"text/html","data":"PGI+"}}]`, "[0].source.media_type"},
			{coachd.RoleUser, `[{"type":"server_tool_use","id":"s1","name":"web_search","input":{}}]`, "[0].type"},
			// A source's keys as the API spells them, not in another case
			// (which encoding/json would match to the same fields).
			{coachd.RoleUser, `[{"type":"image","source":{"Type":"base64","MEDIA_TYPE":"image/png","Data":"iVBO"}}]`, "[0].source"},
			{coachd.RoleUser, `[{"type":"document","source":{"type":"text","media_type":"text/plain","data":"x","DATA":"y"}}]`, "[0].source"},
			{coachd.RoleUser, `[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"image","source":{"TYPE":"base64","media_type":"image/gif","data":"R0lG"}}]}]`, "[0].content[0].source"},
			// The optional fields' values of the API's types.
			{coachd.RoleUser, `[{"type":"document","title":5,"source":{"type":"text","media_type":"text/plain","data":"x"}}]`, "[0].title"},
			{coachd.RoleUser, `[{"type":"document","context":{"a":1},"source":{"type":"text","media_type":"text/plain","data":"x"}}]`, "[0].context"},
			{coachd.RoleUser, `[{"type":"document","citations":"yes","source":{"type":"text","media_type":"text/plain","data":"x"}}]`, "[0].citations"},
			{coachd.RoleUser, `[{"type":"document","citations":{"ENABLED":true},"source":{"type":"text","media_type":"text/plain","data":"x"}}]`, "[0].citations"},
			{coachd.RoleUser, `[{"type":"text","text":"hi","citations":42}]`, "[0].citations"},
			{coachd.RoleUser, `[{"type":"text","text":"hi","citations":[1]}]`, "[0].citations"},
		} {
			errs := coachd.CheckBlocks(tc.role, decodeBlocks(t, tc.raw))
			if len(errs) == 0 || errs[0].Field != tc.field || errs[0].Code == "" || errs[0].Message == "" {
				t.Errorf("%s %s: %+v, want %q first", tc.role, tc.raw, errs, tc.field)
			}
		}
	})
}

// TestSecurityRemainingTokens is issue 20 finding 7 in the domain: what is
// left of a budget saturates instead of wrapping around.
func TestSecurityRemainingTokens(t *testing.T) {
	for _, tc := range []struct{ budget, used, reserved, want int64 }{
		{1000, 100, 50, 850},
		{1000, 1000, 0, 0},
		{1000, 900, 200, 0},
		{0, math.MaxInt64, 5, 0},
		{math.MaxInt64, 0, 0, math.MaxInt64},
		{math.MaxInt64, -1, -1, math.MaxInt64},
		{100, math.MinInt64, 0, math.MaxInt64},
	} {
		if got := coachd.RemainingTokens(tc.budget, tc.used, tc.reserved); got != tc.want {
			t.Errorf("RemainingTokens(%d, %d, %d) = %d, want %d", tc.budget, tc.used, tc.reserved, got, tc.want)
		}
	}
}

// decodeBlocks is raw, a JSON list of blocks, decoded.
func decodeBlocks(t *testing.T, raw string) []coachd.Block {
	t.Helper()
	var bs []coachd.Block
	if err := json.Unmarshal([]byte(raw), &bs); err != nil {
		t.Fatal(err)
	}
	return bs
}

package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestChatInteractionExpiresAt: POST /v1/chat's interaction and the MCP
// chat tool's said nothing of when the question stops taking an answer,
// which the coachd stream's interaction event and the stored pending
// record do; a client of either door could not tell a question still
// open from one that had expired. Both carry the stored expires_at now.
func TestChatInteractionExpiresAt(t *testing.T) {
	ctx := context.Background()
	stored := func(t *testing.T, e *chatEnv, sid string) time.Time {
		t.Helper()
		sess, err := e.alice.c.Session(ctx, sid)
		if err != nil || sess.Pending == nil || sess.Pending.ExpiresAt.IsZero() {
			t.Fatalf("session: %v, %+v", err, sess)
		}
		return sess.Pending.ExpiresAt
	}
	for _, approval := range []bool{false, true} {
		name := map[bool]string{false: "Interaction", true: "Approval"}[approval]
		setup := func(t *testing.T) *chatEnv {
			if approval {
				e, _ := mustApprovalEnv(t)
				refundRound(e)
				return e
			}
			e := MustChatEnv(t, nil)
			e.fake.Enqueue(anthropictest.Blocks(anthropictest.TextBlock("Pick:", 3),
				anthropictest.ToolUse("toolu_o", "show_options", `{"options":["Airport","Downtown"]}`)))
			return e
		}
		t.Run("Chat"+name, func(t *testing.T) {
			e := setup(t)
			r := e.do(request{method: "POST", path: "/v1/chat", key: e.alice.key, body: `{"message":"go on"}`})
			var got struct {
				SessionID   string `json:"session_id"`
				Interaction struct {
					ExpiresAt *time.Time `json:"expires_at"`
				} `json:"interaction"`
			}
			mustUnmarshal(t, r.body, &got)
			if r.status != 200 || got.Interaction.ExpiresAt == nil {
				t.Fatalf("%d %s", r.status, r.body)
			}
			if want := stored(t, e, got.SessionID); !got.Interaction.ExpiresAt.Equal(want) {
				t.Errorf("expires_at %v, want the stored %v", got.Interaction.ExpiresAt, want)
			}
		})
		t.Run("MCP"+name, func(t *testing.T) {
			e := setup(t)
			out := mcpChat(t, e, e.alice.key, map[string]any{"message": "go on"})
			in, _ := out["interaction"].(map[string]any)
			s, _ := in["expires_at"].(string)
			got, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				t.Fatalf("interaction %+v: %v", in, err)
			}
			sid, _ := out["session_id"].(string)
			if want := stored(t, e, sid); !got.Equal(want) {
				t.Errorf("expires_at %v, want the stored %v", got, want)
			}
		})
	}
}

package server_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/client"
)

// expiresAt reads the expires_at of the last event named name.
func expiresAt(t *testing.T, evs []client.Event, name string) time.Time {
	t.Helper()
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Name != name {
			continue
		}
		var v struct {
			ExpiresAt *time.Time `json:"expires_at"`
		}
		if err := json.Unmarshal(evs[i].Data, &v); err != nil {
			t.Fatal(err)
		}
		if v.ExpiresAt == nil {
			t.Fatalf("%s has no expires_at: %s", name, evs[i].Data)
		}
		return *v.ExpiresAt
	}
	t.Fatalf("no %s event", name)
	return time.Time{}
}

// TestInteractionExpiresAt: the coachd dialect's interaction and
// approval_required events said nothing of when the question expires,
// which the stored pending record does (GET /v1/sessions/{id}), so a
// client could not close a question left open on screen at that time.
// They carry the stored expires_at now, live and replayed from the log.
func TestInteractionExpiresAt(t *testing.T) {
	ctx := context.Background()
	check := func(t *testing.T, e *chatEnv, name string) {
		t.Helper()
		s := e.chat(ctx, e.alice.key, "", `{"message":"go on"}`)
		if s.status != 200 {
			t.Fatalf("%d %s", s.status, s.raw)
		}
		sid := s.header.Get("X-Coachd-Session-Id")
		sess, err := e.alice.c.Session(ctx, sid)
		if err != nil || sess.Pending == nil {
			t.Fatalf("session: %v, pending %v", err, sess)
		}
		want := sess.Pending.ExpiresAt
		if got := expiresAt(t, s.events, name); !got.Equal(want) {
			t.Errorf("live %s expires_at %v, want the stored %v", name, got, want)
		}
		replay, _ := e.follow(ctx, t, "/v1/sessions/"+sid+"/stream?last_event_id=0:0", e.alice.key, "", "message_end")
		if got := expiresAt(t, replay, name); !got.Equal(want) {
			t.Errorf("replayed %s expires_at %v, want the stored %v", name, got, want)
		}
	}
	t.Run("Interaction", func(t *testing.T) {
		e := MustChatEnv(t, nil)
		e.fake.Enqueue(anthropictest.Blocks(anthropictest.TextBlock("Pick:", 3),
			anthropictest.ToolUse("toolu_o", "show_options", `{"options":["Airport","Downtown"]}`)))
		check(t, e, "interaction")
	})
	t.Run("Approval", func(t *testing.T) {
		e, _ := mustApprovalEnv(t)
		refundRound(e)
		check(t, e, "approval_required")
	})
}

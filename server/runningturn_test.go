package server_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestSessionRunningTurn: GET /v1/sessions/{id} names the turn still
// running, with the id to follow it from and its first reply message
// (already stored while the turn goes on), so a reloaded page can draw
// the history before it and follow the rest; once the turn ends the
// field is gone.
func TestSessionRunningTurn(t *testing.T) {
	e := MustChatEnv(t, nil)
	ctx := context.Background()
	sess := e.MustSession(e.alice)
	type view struct {
		ID          string `json:"id"`
		RunningTurn *struct {
			Turn        int64  `json:"turn"`
			MessageID   string `json:"message_id"`
			LastEventID string `json:"last_event_id"`
		} `json:"running_turn"`
	}
	get := func() view {
		t.Helper()
		r := e.do(request{method: "GET", path: "/v1/sessions/" + sess.ID, key: e.alice.key})
		var v view
		if err := json.Unmarshal(r.body, &v); r.status != 200 || err != nil || v.ID != sess.ID {
			t.Fatalf("GET session: %d %s", r.status, r.body)
		}
		return v
	}
	if v := get(); v.RunningTurn != nil {
		t.Fatalf("a session with no turn: running_turn %+v", *v.RunningTurn)
	}

	e.fake.Enqueue(
		anthropictest.Blocks(anthropictest.TextBlock("Let me check your notes. ", 3), anthropictest.ToolUse("toolu_1", "list_notes", `{}`, 2)),
		anthropictest.Text("This answer never ends on its own", 4).StallAfter(3),
	)
	done := make(chan stream, 1)
	go func() { done <- e.tryChat(ctx, e.alice.key, "", `{"message":"go","session_id":"`+sess.ID+`"}`) }()
	// The first round is stored while the second call streams.
	var reply *coachd.Message
	waitFor(t, func() bool {
		msgs, _, err := e.alice.c.Messages(ctx, sess.ID, coachd.Page{})
		for _, m := range msgs {
			if err == nil && m.Role == coachd.RoleAssistant && len(m.Blocks) == 2 && m.Blocks[1].ID == "toolu_1" {
				reply = m
			}
		}
		return reply != nil
	})
	v := get()
	if v.RunningTurn == nil || v.RunningTurn.Turn != 1 || v.RunningTurn.LastEventID != "1:0" || v.RunningTurn.MessageID != reply.ID {
		t.Fatalf("running_turn %+v, want turn 1 from 1:0 with message %s", v.RunningTurn, reply.ID)
	}
	// Following from it replays the turn from its start.
	evs, status := e.follow(ctx, t, "/v1/sessions/"+sess.ID+"/stream", e.alice.key, v.RunningTurn.LastEventID, "content_delta")
	if status != 200 || len(evs) == 0 || evs[0].Name != "message_start" || evs[0].ID != "1:1" {
		t.Fatalf("following from %s: %d %v", v.RunningTurn.LastEventID, status, evs)
	}

	if r := e.post(e.alice.key, "/v1/sessions/"+sess.ID+"/stop", ``, nil, nil); r.status != 202 {
		t.Fatalf("stop: %d %s", r.status, r.body)
	}
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the stopped turn's stream did not end")
	}
	waitFor(t, func() bool { return get().RunningTurn == nil })
}

package server_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/coachd/coachd/server"
)

// TestSeed000RecordContentText: seed 000's route keeps one finalText for
// the whole turn ("let finalText" before its loop, line 584; "finalText
// += aspEvent.text", line 611) and records every round's reply with
// "content_blocks: finalMessage.content, content_text: finalText" (lines
// 625, 655): the second round's content_text holds the first round's
// words too. coachd stored content_text as the message's content, so the
// session's messages showed the first round's text twice, and content no
// longer said what the blocks say. The content is the blocks' text.
func TestSeed000RecordContentText(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{})
	pf := seed000Preflight(t, e, "how do I rank up?")
	round := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"messages":[
		{"role":"user","content_blocks":[{"type":"text","text":"how do I rank up?"}],"content_text":"how do I rank up?"},
		{"role":"assistant","content_blocks":[{"type":"text","text":"Let me check. "},{"type":"tool_use","id":"toolu_01","name":"get_rank_benchmarks","input":{"rank":"diamond"}}],"content_text":"Let me check. "},
		{"role":"user","content_blocks":[{"type":"tool_result","tool_use_id":"toolu_01","content":"{}"}],"content_text":""}],
		"tokens_used":300}`, pf.SessionID, pf.ReservationID)
	final := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"messages":[
		{"role":"user","content_blocks":[{"type":"text","text":""}],"content_text":""},
		{"role":"assistant","content_blocks":[{"type":"text","text":"Boost less."}],"content_text":"Let me check. Boost less."}],
		"tokens_used":450}`, pf.SessionID, pf.ReservationID)
	for _, body := range []string{round, final} {
		if r := e.post(e.alice.key, "/v1/chat/record", body, nil, nil); r.status != 200 {
			t.Fatalf("record %d %s", r.status, r.body)
		}
	}
	msgs, err := e.db.History(context.Background(), e.alice.ID, pf.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs {
		got = append(got, m.Content)
	}
	if want := `["how do I rank up?" "Let me check. " "" "Boost less."]`; fmt.Sprintf("%q", got) != want {
		t.Fatalf("contents %q, want the blocks' text", got)
	}
}

package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// userTexts counts the user text blocks saying text in the model's
// last request.
func userTexts(t *testing.T, e *chatEnv, text string) int {
	t.Helper()
	reqs := e.fake.Requests()
	n := 0
	for _, m := range reqs[len(reqs)-1].Messages() {
		for _, b := range m.Blocks {
			if m.Role == coachd.RoleUser && b.Type == coachd.BlockText && b.Text == text {
				n++
			}
		}
	}
	return n
}

// TestSeedResendAfterError: seeds 000 and 002's clients know no `retry`:
// after a turn that ended in an error their user sends the message
// again, the same body ({message, session_id}: seed 000's page, seed
// 002's chat view). The message was stored with the failed turn; stored
// again, the model saw the question twice (and a reply that broke off
// between them). Sent again it now runs that turn again; the same words
// sent after the coach replied are a new message.
func TestSeedResendAfterError(t *testing.T) {
	boom := anthropictest.Status(500, nil, `{"type":"error","error":{"type":"api_error","message":"boom"}}`)
	for _, c := range []struct {
		name, protocol string
		fail           []anthropictest.Reply
	}{
		{"AspBeforeReply", "?protocol=asp", []anthropictest.Reply{boom}},
		{"SageBrokeOff", "?protocol=sage", []anthropictest.Reply{anthropictest.Text("Let me think about your week and", 4).ErrorAfter(5, "api_error", "boom")}},
		{"SageBetweenRounds", "?protocol=sage", []anthropictest.Reply{anthropictest.Blocks(anthropictest.ToolUse("toolu_r1", "list_notes", `{}`)), boom}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := MustChatEnv(t, nil)
			ctx := context.Background()
			e.fake.Enqueue(anthropictest.Text("Hello.", 8))
			first := e.chat(ctx, e.alice.key, c.protocol, `{"message":"hi"}`)
			sid := first.header.Get("X-Coachd-Session-Id")
			body := `{"message":"how was my week?","session_id":"` + sid + `"}`
			e.fake.Enqueue(c.fail...)
			failed := e.chat(ctx, e.alice.key, c.protocol, body)
			if failed.status != 200 {
				t.Fatalf("the failed turn: %d\n%s", failed.status, failed.raw)
			}
			e.fake.Enqueue(anthropictest.Text("A good one.", 8))
			again := e.chat(ctx, e.alice.key, c.protocol, body)
			if again.status != 200 {
				t.Fatalf("sent again: %d\n%s", again.status, again.raw)
			}
			if n := userTexts(t, e, "how was my week?"); n != 1 {
				t.Errorf("the model saw the message %d times, want 1: %s", n, e.fake.Requests()[len(e.fake.Requests())-1].Raw)
			}
			msgs, err := e.db.History(ctx, e.alice.ID, sid)
			if err != nil {
				t.Fatal(err)
			}
			stored := 0
			for _, m := range msgs {
				if m.Role == coachd.RoleUser && m.Content == "how was my week?" {
					stored++
				}
			}
			if stored != 1 {
				t.Errorf("the message stored %d times, want 1: %s", stored, mustJSON(t, msgs))
			}

			// The same words after the coach replied: a new message.
			e.fake.Enqueue(anthropictest.Text("Still good.", 8))
			e.chat(ctx, e.alice.key, c.protocol, body)
			if n := userTexts(t, e, "how was my week?"); n != 2 {
				t.Errorf("a deliberate second message: the model saw it %d times, want 2", n)
			}
		})
	}
}

// TestSeed002AnswerResendAfterError: seed 002's client answers a paused
// tool with a new request carrying its tool_result (lines 653-660: "Round
// 2: Client: New POST ... with messages including tool_result"). When
// the turn that answer starts fails, the pills are still on screen and
// the user taps the same one again: coachd had cleared the pending call
// with the stored answer and refused it with 409 ("no pending
// interaction"), so the conversation could not go on from the answer.
// The same answer now runs that turn again; another one is still
// refused.
func TestSeed002AnswerResendAfterError(t *testing.T) {
	e := MustChatEnv(t, nil)
	ctx := context.Background()
	e.fake.Enqueue(anthropictest.Blocks(anthropictest.TextBlock("When?", 0), anthropictest.ToolUse("toolu_pick", "show_options", `{"options":["Morning","Evening"]}`)))
	first := e.chat(ctx, e.alice.key, "?protocol=sage", `{"message":"when should I run?"}`)
	sid := first.header.Get("X-Coachd-Session-Id")
	answer := `{"session_id":"` + sid + `","tool_result":{"tool_use_id":"toolu_pick","content":"Morning"}}`
	e.fake.Enqueue(anthropictest.Status(500, nil, `{"type":"error","error":{"type":"api_error","message":"boom"}}`))
	if s := e.chat(ctx, e.alice.key, "?protocol=sage", answer); s.status != 200 {
		t.Fatalf("the answer: %d\n%s", s.status, s.raw)
	}
	other := `{"session_id":"` + sid + `","tool_result":{"tool_use_id":"toolu_pick","content":"Evening"}}`
	if s := e.chat(ctx, e.alice.key, "?protocol=sage", other); s.status != 409 {
		t.Errorf("another answer to the answered call: %d, want 409\n%s", s.status, s.raw)
	}
	e.fake.Enqueue(anthropictest.Text("Morning it is.", 8))
	s := e.chat(ctx, e.alice.key, "?protocol=sage", answer)
	if s.status != 200 || !strings.Contains(string(s.raw), `{"text":"Morn`) {
		t.Fatalf("the same answer again: %d\n%s", s.status, s.raw)
	}
	n := 0
	reqs := e.fake.Requests()
	for _, b := range reqs[len(reqs)-1].ToolResults() {
		if b.ToolUseID == "toolu_pick" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the model got %d results for the call, want 1", n)
	}
}

package server_test

import (
	"encoding/json"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestOpenAIRetryAfterToolRound: a completion whose turn ran a tool
// round, then failed before the coach replied (the model busy: a 503,
// which the openai SDKs retry by themselves), is sent again whole. It
// goes on in the same session from the stored round: the tool does not
// run twice, the message is stored once and no session is left behind
// unanswered. A review found the retry, as the conversation's first
// message, started a new session, and later in a conversation went on
// in a copy of it, the model not told of the round it had made (and
// asked again to make the refund). A user who says the same words again after the reply still
// starts a new turn.
func TestOpenAIRetryAfterToolRound(t *testing.T) {
	round := func(e *chatEnv) {
		e.fake.Enqueue(anthropictest.Blocks(anthropictest.TextBlock("Refunding.", 3),
			anthropictest.ToolUse("toolu_r", "refund", `{"amount":50}`)),
			anthropictest.Text("never sent", 4).ErrorAfter(0, "", ""),
			anthropictest.Text("Refunded 50.", 4))
	}
	check := func(t *testing.T, e *chatEnv, body string, messages int, runs interface{ Load() int64 }) string {
		t.Helper()
		if r := e.post(e.alice.key, "/v1/chat/completions", body, nil, nil); r.status != 503 {
			t.Fatalf("busy: %d %s", r.status, r.body)
		}
		var c completion
		r := e.post(e.alice.key, "/v1/chat/completions", body, nil, &c)
		if r.status != 200 || c.Choices[0].Message.Content != "Refunded 50." {
			t.Fatalf("retried: %d %s", r.status, r.body)
		}
		if n := runs.Load(); n != 1 {
			t.Errorf("the refund ran %d times", n)
		}
		// The model goes on from the round: it sees the refund made, and
		// is not asked again to make it.
		reqs := e.fake.Requests()
		last := reqs[len(reqs)-1]
		if res := last.ToolResults(); len(res) != 1 || res[0].ToolUseID != "toolu_r" {
			t.Errorf("the retry's model request has not the round's result: %q", modelTexts(&last))
		}
		var list struct{ Sessions []struct{ ID string } }
		json.Unmarshal(e.do(request{method: "GET", path: "/v1/sessions", key: e.alice.key}).body, &list)
		if len(list.Sessions) != 1 {
			t.Errorf("%d sessions, want the chat's one: %+v", len(list.Sessions), list.Sessions)
		}
		var got struct {
			Messages []struct{ Role, Content string }
		}
		json.Unmarshal(e.do(request{method: "GET", path: "/v1/sessions/" + r.header.Get("X-Coachd-Session-Id") + "/messages", key: e.alice.key}).body, &got)
		if len(got.Messages) != messages {
			t.Errorf("%d stored messages, want %d: %+v", len(got.Messages), messages, got.Messages)
		}
		return c.Choices[0].Message.Content
	}
	t.Run("FirstMessage", func(t *testing.T) {
		e, runs := mustApprovalEnv(t)
		round(e)
		check(t, e, oaiBody("refund me"), 4, runs)
	})
	t.Run("LaterMessage", func(t *testing.T) {
		e, runs := mustApprovalEnv(t)
		e.fake.Enqueue(anthropictest.Text("Hello.", 4))
		var c completion
		if r := e.post(e.alice.key, "/v1/chat/completions", oaiBody("hi"), nil, &c); r.status != 200 {
			t.Fatalf("first: %d %s", r.status, r.body)
		}
		hello := c.Choices[0].Message.Content
		round(e)
		reply := check(t, e, oaiBody("hi", hello, "refund me"), 6, runs)
		// The same words again after the reply: a new turn.
		e.fake.Enqueue(anthropictest.Text("Already refunded.", 4))
		if r := e.post(e.alice.key, "/v1/chat/completions", oaiBody("hi", hello, "refund me", reply, "refund me"), nil, &c); r.status != 200 ||
			c.Choices[0].Message.Content != "Already refunded." {
			t.Fatalf("the same words after the reply: %d %s", r.status, r.body)
		}
		reqs := e.fake.Requests()
		if got := modelTexts(&reqs[len(reqs)-1]); len(got) == 0 || got[len(got)-1] != "user: refund me" || len(got) < 5 {
			t.Errorf("the repeat's history: %q", got)
		}
	})
}

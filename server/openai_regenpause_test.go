package server_test

import (
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestOpenAIRegenerateAfterApproval: the user approved a call with "1"
// and it ran; a chat UI's Regenerate resends the conversation up to that
// "1". The reply is made again from the call's stored result, in a copy
// of the session: the call does not run twice, and the model does not
// read it as interrupted, followed by a bare "1". An edit of the "1" to
// "2" denies it there instead, as the tool's result.
func TestOpenAIRegenerateAfterApproval(t *testing.T) {
	e, runs := mustApprovalEnv(t)
	refundRound(e)
	e.fake.Enqueue(anthropictest.Text("Refunded 250.", 4), anthropictest.Text("Your refund of 250 is done.", 4),
		anthropictest.Text("No refund, then.", 4))
	var c completion
	r := e.post(e.alice.key, "/v1/chat/completions", oaiBody("refund me"), nil, &c)
	question := c.Choices[0].Message.Content
	if r.status != 200 || !strings.Contains(question, "1. Approve") {
		t.Fatalf("pause: %d %s", r.status, r.body)
	}
	first := r.header.Get("X-Coachd-Session-Id")
	if r := e.post(e.alice.key, "/v1/chat/completions", oaiBody("refund me", question, "1"), nil, &c); r.status != 200 || runs.Load() != 1 {
		t.Fatalf("approve: %d %s, %d runs", r.status, r.body, runs.Load())
	}
	r = e.post(e.alice.key, "/v1/chat/completions", oaiBody("refund me", question, "1"), nil, &c)
	if r.status != 200 || c.Choices[0].Message.Content != "Your refund of 250 is done." || r.header.Get("X-Coachd-Session-Id") == first {
		t.Fatalf("regenerate: %d %s", r.status, r.body)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("the approved call ran %d times", n)
	}
	reqs := e.fake.Requests()
	last := reqs[len(reqs)-1]
	res := last.ToolResults()
	if len(res) != 1 || res[0].ToolUseID != "toolu_r" || res[0].IsError || res[0].ResultText() != `{"refunded":true}` {
		t.Errorf("the regenerated reply's tool result: %+v (model saw %q)", res, modelTexts(&last))
	}
	if got := last.LastUserText(); got == "1" {
		t.Errorf("the model read the approval as the message %q: %q", got, modelTexts(&last))
	}
	r = e.post(e.alice.key, "/v1/chat/completions", oaiBody("refund me", question, "2"), nil, &c)
	if r.status != 200 || c.Choices[0].Message.Content != "No refund, then." {
		t.Fatalf("edited to a denial: %d %s", r.status, r.body)
	}
	reqs = e.fake.Requests()
	last = reqs[len(reqs)-1]
	res = last.ToolResults()
	if len(res) != 1 || res[0].ToolUseID != "toolu_r" || !res[0].IsError || !strings.HasPrefix(res[0].ResultText(), "The user denied this call") {
		t.Errorf("the edited answer's tool result: %+v (model saw %q)", res, modelTexts(&last))
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("the call ran %d times", n)
	}
}

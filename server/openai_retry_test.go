package server_test

import (
	"encoding/json"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestOpenAIRetryNotStoredTwice: a completion that failed before the
// model answered (the model busy: a 503, which the openai SDKs retry by
// themselves, as Open WebUI's and LibreChat's Regenerate resend it) is
// sent again whole; coachd runs it again as a retry of the stored user
// message. A review found the retry stored the message a second time, so
// the model read the user saying it twice.
func TestOpenAIRetryNotStoredTwice(t *testing.T) {
	e := MustChatEnv(t, nil)
	e.fake.Enqueue(anthropictest.Text("Hello, driver.", 4),
		anthropictest.Text("never sent", 4).ErrorAfter(0, "", ""),
		anthropictest.Text("The stadium at ten.", 4))
	var c completion
	if r := e.post(e.alice.key, "/v1/chat/completions", oaiBody("hi"), nil, &c); r.status != 200 {
		t.Fatalf("first: %d %s", r.status, r.body)
	}
	body := oaiBody("hi", c.Choices[0].Message.Content, "and tonight?")
	if r := e.post(e.alice.key, "/v1/chat/completions", body, nil, nil); r.status != 503 {
		t.Fatalf("busy: %d %s", r.status, r.body)
	}
	r := e.post(e.alice.key, "/v1/chat/completions", body, nil, &c)
	if r.status != 200 || c.Choices[0].Message.Content != "The stadium at ten." {
		t.Fatalf("retried: %d %s", r.status, r.body)
	}
	reqs := e.fake.Requests()
	msgs := reqs[len(reqs)-1].Messages()
	raw, _ := json.Marshal(msgs)
	if len(msgs) != 3 || len(msgs[2].Blocks) != 1 || msgs[2].Blocks[0].Text != "and tonight?" {
		t.Errorf("the retry's history: %s", raw)
	}
	var got struct {
		Messages []struct{ Role, Content string }
	}
	m := e.do(request{method: "GET", path: "/v1/sessions/" + r.header.Get("X-Coachd-Session-Id") + "/messages", key: e.alice.key})
	json.Unmarshal(m.body, &got)
	if n := len(got.Messages); n != 4 {
		t.Errorf("%d stored messages, want 4: %+v", n, got.Messages)
	}
}

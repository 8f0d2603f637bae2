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

// TestOpenAIEditRetryOneCopy: an edited question goes on in a copy of
// the session up to it; when the model is busy, the SDK's retry of that
// same request goes on in that copy, as a retry of its stored message,
// not in a second copy that leaves the first one unanswered.
func TestOpenAIEditRetryOneCopy(t *testing.T) {
	e := MustChatEnv(t, nil)
	e.fake.Enqueue(anthropictest.Text("Hello, driver.", 4), anthropictest.Text("The stadium at ten.", 4),
		anthropictest.Text("never sent", 4).ErrorAfter(0, "", ""),
		anthropictest.Text("Noon, downtown.", 4))
	var c completion
	if r := e.post(e.alice.key, "/v1/chat/completions", oaiBody("hi"), nil, &c); r.status != 200 {
		t.Fatalf("first: %d %s", r.status, r.body)
	}
	hello := c.Choices[0].Message.Content
	if r := e.post(e.alice.key, "/v1/chat/completions", oaiBody("hi", hello, "and tonight?"), nil, &c); r.status != 200 {
		t.Fatalf("second: %d %s", r.status, r.body)
	}
	edited := oaiBody("hi", hello, "what about lunch?")
	if r := e.post(e.alice.key, "/v1/chat/completions", edited, nil, nil); r.status != 503 {
		t.Fatalf("busy: %d %s", r.status, r.body)
	}
	r := e.post(e.alice.key, "/v1/chat/completions", edited, nil, &c)
	if r.status != 200 || c.Choices[0].Message.Content != "Noon, downtown." {
		t.Fatalf("retried: %d %s", r.status, r.body)
	}
	var list struct{ Sessions []struct{ ID string } }
	json.Unmarshal(e.do(request{method: "GET", path: "/v1/sessions", key: e.alice.key}).body, &list)
	if len(list.Sessions) != 2 {
		t.Errorf("%d sessions, want the chat and its one copy: %+v", len(list.Sessions), list.Sessions)
	}
	var got struct {
		Messages []struct{ Role, Content string }
	}
	json.Unmarshal(e.do(request{method: "GET", path: "/v1/sessions/" + r.header.Get("X-Coachd-Session-Id") + "/messages", key: e.alice.key}).body, &got)
	if n := len(got.Messages); n != 4 || got.Messages[2].Content != "what about lunch?" {
		t.Errorf("the copy holds %d messages, want 4: %+v", n, got.Messages)
	}
}

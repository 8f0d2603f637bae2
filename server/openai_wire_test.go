package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// oaiDataLines are the JSON objects of a streamed chat completion's data
// lines, [DONE] left out.
func oaiDataLines(t *testing.T, body []byte) []map[string]json.RawMessage {
	t.Helper()
	var out []map[string]json.RawMessage
	for _, line := range strings.Split(string(body), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		out = append(out, m)
	}
	return out
}

// TestOpenAIStreamErrorShape: an error in a stream is sent as OpenAI sends
// one, a data line holding only {"error": {message, type, param, code}}.
// Clients that parse each line as a chunk first (the AI SDK's
// openai-compatible provider, whose chunk schema drops unknown keys) read
// a chunk with choices and an error as an empty chunk, and the error is
// lost: the reply ends cut short and reads as whole.
func TestOpenAIStreamErrorShape(t *testing.T) {
	e := MustChatEnv(t, nil)
	e.fake.Enqueue(anthropictest.Text("The first words, then", 4).ErrorAfter(4, "api_error", "boom"))
	s := e.do(request{method: "POST", path: "/v1/chat/completions", key: e.alice.key,
		body: `{"model":"default","stream":true,"messages":[{"role":"user","content":"go"}]}`})
	var got map[string]json.RawMessage
	for _, m := range oaiDataLines(t, s.body) {
		if m["error"] != nil {
			got = m
		}
	}
	if got == nil {
		t.Fatalf("no error in the stream:\n%s", s.body)
	}
	if len(got) != 1 {
		b, _ := json.Marshal(got)
		t.Errorf("the error line has more than the error: %s", b)
	}
	var inner map[string]any
	json.Unmarshal(got["error"], &inner)
	for _, k := range []string{"message", "type", "param", "code"} {
		if _, ok := inner[k]; !ok {
			t.Errorf("the error has no %s: %s", k, got["error"])
		}
	}
}

// TestOpenAIRefusesSeveralChoices: n asks for that many choices; a coach
// gives one reply per turn, so n > 1 is a 400 naming n (as OpenAI names
// the param it refuses), not a 200 with one choice where the client reads
// choices[1]. n: 1 is served.
func TestOpenAIRefusesSeveralChoices(t *testing.T) {
	e := MustChatEnv(t, nil)
	r := e.post(e.alice.key, "/v1/chat/completions", `{"model":"default","n":2,"messages":[{"role":"user","content":"hi"}]}`, nil, nil)
	var body struct {
		Error struct {
			Type  string
			Param *string
		}
	}
	json.Unmarshal(r.body, &body)
	if r.status != 400 || body.Error.Type != "invalid_request_error" || body.Error.Param == nil || *body.Error.Param != "n" {
		t.Errorf("n: 2: %d %s", r.status, r.body)
	}
	if n := len(e.fake.Requests()); n != 0 {
		t.Errorf("the model was asked %d times", n)
	}
	e.fake.Enqueue(anthropictest.Text("Hi.", 4))
	var c completion
	if r := e.post(e.alice.key, "/v1/chat/completions", `{"model":"default","n":1,"messages":[{"role":"user","content":"hi"}]}`, nil, &c); r.status != 200 || len(c.Choices) != 1 {
		t.Errorf("n: 1: %d %s", r.status, r.body)
	}
}

// TestOpenAIMidTurnErrorNotWhole: a non-streamed completion whose turn
// fails after some text answers the error in OpenAI's shape, as the
// streamed one sends its error chunk; a 200 with the text so far and
// finish_reason "stop" reads to the client as the whole reply. A broken
// contract is the model's failure, named, not an internal error.
func TestOpenAIMidTurnErrorNotWhole(t *testing.T) {
	t.Run("Upstream", func(t *testing.T) {
		e := MustChatEnv(t, nil)
		e.fake.Enqueue(anthropictest.Text("The first words, then", 4).ErrorAfter(4, "api_error", "boom"))
		r := e.post(e.alice.key, "/v1/chat/completions", `{"model":"default","messages":[{"role":"user","content":"go"}]}`, nil, nil)
		if r.status != 502 {
			t.Fatalf("a turn that failed mid-reply: %d %s", r.status, r.body)
		}
		if typ, _ := oaiErrorOf(t, r); typ != "api_error" {
			t.Errorf("type %q: %s", typ, r.body)
		}
	})
	t.Run("Contract", func(t *testing.T) {
		ag := agent.DefaultAgent()
		ag.Contracts = agent.Contracts{MustCall: []string{"list_notes"}, MaxRepairs: 1}
		e := MustChatEnv(t, ag)
		e.fake.Enqueue(anthropictest.Text("No tools today.", 4), anthropictest.Text("Still none.", 4))
		r := e.post(e.alice.key, "/v1/chat/completions", oaiBody("hi"), nil, nil)
		if _, code := oaiErrorOf(t, r); r.status != 502 || code != agent.EContractViolation || !strings.Contains(string(r.body), "list_notes") {
			t.Errorf("a broken contract: %d %s", r.status, r.body)
		}
	})
}

// TestOpenAIRefusalFinishReason: a reply the model refused ends with
// finish_reason "content_filter", streamed or not, as OpenAI marks
// content it withheld (and as coachd's own openai provider reads it back
// as a refusal), not "stop", which reads as a complete answer.
func TestOpenAIRefusalFinishReason(t *testing.T) {
	e := MustChatEnv(t, nil)
	e.fake.Enqueue(anthropictest.Text("I can't help with that.", 5).WithStop("refusal"),
		anthropictest.Text("I can't help with that.", 5).WithStop("refusal"))
	var c completion
	if r := e.post(e.alice.key, "/v1/chat/completions", oaiBody("something bad"), nil, &c); r.status != 200 || c.Choices[0].FinishReason != "content_filter" {
		t.Errorf("not streamed: %d %s", r.status, r.body)
	}
	s := e.do(request{method: "POST", path: "/v1/chat/completions", key: e.alice.key,
		body: `{"model":"default","stream":true,"messages":[{"role":"user","content":"something else bad"}]}`})
	if !strings.Contains(string(s.body), `"finish_reason":"content_filter"`) {
		t.Errorf("streamed:\n%s", s.body)
	}
}

package server_test

import (
	"encoding/json"
	"testing"
)

// TestOpenAIModelRetrieve: GET /v1/models/{model} (the openai SDKs'
// models.retrieve, which clients call to check a configured model) is
// the agent as a model object, as it is listed; an unknown one is a 404
// in OpenAI's shape, and so is a bad key.
func TestOpenAIModelRetrieve(t *testing.T) {
	e := MustChatEnv(t, nil)
	r := e.do(request{method: "GET", path: "/v1/models/default", key: e.alice.key})
	var got map[string]any
	json.Unmarshal(r.body, &got)
	if r.status != 200 || got["id"] != "default" || got["object"] != "model" || got["owned_by"] != "coachd" {
		t.Errorf("default: %d %s", r.status, r.body)
	}
	if _, ok := got["created"]; !ok {
		t.Errorf("no created: %s", r.body)
	}
	// OpenAI's 404 of a model: type invalid_request_error (not_found_error
	// is Anthropic's), code model_not_found; a chat with one too.
	r = e.do(request{method: "GET", path: "/v1/models/no-such-coach", key: e.alice.key})
	if typ, code := oaiErrorOf(t, r); r.status != 404 || typ != "invalid_request_error" || code != "model_not_found" {
		t.Errorf("unknown: %d %s", r.status, r.body)
	}
	r = e.post(e.alice.key, "/v1/chat/completions", `{"model":"no-such-coach","messages":[{"role":"user","content":"hi"}]}`, nil, nil)
	if typ, code := oaiErrorOf(t, r); r.status != 404 || typ != "invalid_request_error" || code != "model_not_found" {
		t.Errorf("a chat with an unknown model: %d %s", r.status, r.body)
	}
	r = e.do(request{method: "GET", path: "/v1/models/default", key: "ck_wrong"})
	if _, code := oaiErrorOf(t, r); r.status != 401 || code != "invalid_api_key" {
		t.Errorf("bad key: %d %s", r.status, r.body)
	}
}

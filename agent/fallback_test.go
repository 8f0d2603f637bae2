package agent_test

import (
	"net/http"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestFallbackModel: a round the model refuses as overloaded before any
// byte reached the client goes to the agent's fallback model; a failure
// after text was streamed does not (the client saw the first model).
func TestFallbackModel(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	h.agent.Model, h.agent.FallbackModel = "claude-opus-5-5", "claude-haiku-5-5"
	overloaded := anthropictest.Status(529, http.Header{}, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	h.fake.Enqueue(overloaded, anthropictest.Text("From the fallback.", 4))
	res := h.turn(agent.TurnRequest{Message: "hi"}, &sink{})
	if res.StopReason != coachd.TurnEndTurn || res.Text != "From the fallback." {
		t.Fatalf("got %+v", res)
	}
	reqs := h.fake.Requests()
	if len(reqs) != 2 || reqs[0].Model != "claude-opus-5-5" || reqs[1].Model != "claude-haiku-5-5" {
		t.Fatalf("models asked: %d requests", len(reqs))
	}
	// Text already streamed: the error stands.
	h.fake.Enqueue(anthropictest.Text("Halfway and then", 4).ErrorAfter(4, "overloaded_error", "Overloaded"))
	res = h.turn(agent.TurnRequest{Message: "again"}, &sink{})
	if res.StopReason != coachd.TurnError || len(h.fake.Requests()) != 3 {
		t.Fatalf("after streamed text: %+v, %d requests", res, len(h.fake.Requests()))
	}
	// A bad request is not a reason to switch models.
	h.fake.Enqueue(anthropictest.Status(400, http.Header{}, `{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}`))
	res = h.turn(agent.TurnRequest{Message: "once more"}, &sink{})
	if res.StopReason != coachd.TurnError || len(h.fake.Requests()) != 4 {
		t.Fatalf("a 400 fell back: %+v, %d requests", res, len(h.fake.Requests()))
	}
}

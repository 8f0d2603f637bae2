package server_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestChatContractViolationDetails: POST /v1/chat answers a turn that
// ended with its contract unmet with the error's details, one per
// violation (field, message, code), as the stream's error event carries
// them: a client of the JSON endpoint could only parse the message.
func TestChatContractViolationDetails(t *testing.T) {
	ag := agent.DefaultAgent()
	ag.Contracts = agent.Contracts{MustCall: []string{"list_notes"}, MaxRepairs: 1}
	e := MustChatEnv(t, ag)
	e.fake.Enqueue(anthropictest.Text("No tools today.", 4), anthropictest.Text("Still none.", 4))
	var out struct {
		StopReason string `json:"stop_reason"`
		Error      struct {
			Code    string              `json:"code"`
			Details []coachd.FieldError `json:"details"`
		} `json:"error"`
	}
	r := e.post(e.alice.key, "/v1/chat", `{"message":"hi"}`, nil, &out)
	if r.status != 200 || out.StopReason != coachd.TurnContractViolation || out.Error.Code != agent.EContractViolation {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if d := out.Error.Details; len(d) != 1 || d[0].Field != "must_call" || d[0].Code != "must_call" {
		t.Fatalf("details %+v in %s", d, r.body)
	}
}

// TestReviewContractViolationDetails: POST /v1/reviews whose coach
// recorded its decision and then never answered with it as its contract
// asks carries the violation's details beside the review, as /v1/chat.
func TestReviewContractViolationDetails(t *testing.T) {
	e, _ := reviewEnv(t)
	e.fake.SetScript(func(req *anthropictest.Request) anthropictest.Reply {
		if len(req.Messages()) > 6 { // validated, tested and decided: then prose only
			return anthropictest.Text("I have decided.", 5)
		}
		return honestCoach(req)
	})
	var out struct {
		StopReason string `json:"stop_reason"`
		Decision   json.RawMessage
		Error      struct {
			Code    string              `json:"code"`
			Details []coachd.FieldError `json:"details"`
		} `json:"error"`
	}
	r := e.post(e.alice.key, "/v1/reviews", fmt.Sprintf(reviewBody, "sample"), nil, &out)
	if r.status != 200 || out.StopReason != coachd.TurnContractViolation || out.Error.Code != agent.EContractViolation || len(out.Decision) == 0 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if d := out.Error.Details; len(d) == 0 || d[0].Code != "must_output" {
		t.Fatalf("details %+v in %s", d, r.body)
	}
}

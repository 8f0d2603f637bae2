package agent_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestFreePreviewUpstreamError: a user whose one free turn failed
// upstream before the model said anything can retry it: the failed turn
// spent nothing and did not use up the free preview.
func TestFreePreviewUpstreamError(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	h.agent.FreePreviewTurns = 1
	zero := int64(0)
	if _, err := h.store.UpdateUser(context.Background(), h.user.ID, coachd.UserUpdate{TokenBudget: &zero}); err != nil {
		t.Fatal(err)
	}
	h.fake.Enqueue(anthropictest.Status(http.StatusInternalServerError, nil,
		`{"type":"error","error":{"type":"api_error","message":"boom"}}`))
	res := h.turn(agent.TurnRequest{Message: "hi"}, &sink{})
	if res.StopReason != coachd.TurnError || res.Usage.Total() != 0 {
		t.Fatalf("stop %s usage %+v", res.StopReason, res.Usage)
	}
	h.fake.Enqueue(anthropictest.Text("Welcome!", 5))
	tr, err := h.runner.Prepare(context.Background(), agent.TurnRequest{User: h.user, SessionID: res.SessionID, Retry: true})
	if err != nil {
		t.Fatalf("retrying the failed free turn: %v", err)
	}
	if res := tr.Run(context.Background(), &sink{}); res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("retry: stop %s %v", res.StopReason, res.Err)
	}
	if _, err := h.runner.Prepare(context.Background(), agent.TurnRequest{User: h.user, SessionID: res.SessionID, Message: "more"}); coachd.ErrorCode(err) != coachd.EBUDGET {
		t.Fatalf("a second free turn: %v", err)
	}
}

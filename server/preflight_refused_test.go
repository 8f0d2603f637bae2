package server_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/coachd/coachd/agent"
)

// TestPreflightRefusedLeavesNoSession: a preflight without a session_id
// that the budget refuses (budget_remaining 0, as seed 000's route retries it) leaves no
// session behind, as a refused chat turn does not: each retry would add
// an empty conversation to the user's list, up to the sessions cap.
func TestPreflightRefusedLeavesNoSession(t *testing.T) {
	e := MustChatEnv(t, agent.DefaultAgent())
	zero := int64(0)
	_, key, err := e.admin.CreateUser(context.Background(), "carol", &zero)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if r := e.post(key, "/v1/chat/preflight", `{"message":"how do I rank up?"}`, nil, nil); !budgetRefused(r) {
			t.Fatalf("preflight %d %s, want refused", r.status, r.body)
		}
	}
	var list struct {
		Sessions []struct {
			ID string `json:"id"`
		} `json:"sessions"`
	}
	r := e.do(request{method: "GET", path: "/v1/sessions", key: key})
	if err := json.Unmarshal(r.body, &list); err != nil || r.status != 200 || len(list.Sessions) != 0 {
		t.Fatalf("sessions after three refused preflights: %d %+v, want none", r.status, list.Sessions)
	}
}

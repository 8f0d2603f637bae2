package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/server"
)

// TestPreflightBudgetExhausted: seed 000's chatPreflight throws on any
// answer that is not 2xx ("Preflight failed", line 478), so its route
// answered a 500, never its own 402 {"error":"Budget exhausted"}, which it
// sends when preflight answers budget_remaining <= 0 (lines 565-566). A
// preflight the budget refuses is a 200 with budget_remaining 0, no
// reservation, no session created, and the error beside the fields.
func TestPreflightBudgetExhausted(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{})
	ctx := context.Background()
	// A first exchange, recorded, so that the session has history.
	pf := seed000Preflight(t, e, "how do I rank up?")
	rec := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"messages":[
		{"role":"user","content_blocks":[{"type":"text","text":"how do I rank up?"}]},
		{"role":"assistant","content_blocks":[{"type":"text","text":"Boost less."}]}],"tokens_used":300}`, pf.SessionID, pf.ReservationID)
	if r := e.post(e.alice.key, "/v1/chat/record", rec, nil, nil); r.status != 200 {
		t.Fatalf("record %d %s", r.status, r.body)
	}
	budget := int64(310)
	if _, err := e.admin.UpdateUser(ctx, e.alice.ID, coachd.UserUpdate{TokenBudget: &budget}); err != nil {
		t.Fatal(err)
	}
	sessions := func() int {
		var list struct {
			Sessions []json.RawMessage `json:"sessions"`
		}
		r := e.do(request{method: "GET", path: "/v1/sessions", key: e.alice.key})
		if err := json.Unmarshal(r.body, &list); err != nil || r.status != 200 {
			t.Fatalf("sessions %d %s", r.status, r.body)
		}
		return len(list.Sessions)
	}

	for _, c := range []struct{ name, sessionID string }{{"NewSession", ""}, {"InSession", pf.SessionID}} {
		t.Run(c.name, func(t *testing.T) {
			body := `{"message":"and my rotation?"}`
			if c.sessionID != "" {
				body = fmt.Sprintf(`{"message":"and my rotation?","session_id":%q}`, c.sessionID)
			}
			r := e.post(e.alice.key, "/v1/chat/preflight", body, nil, nil)
			var got struct {
				EstimatedTokens int64 `json:"estimated_tokens"`
			}
			if r.status != 200 || json.Unmarshal(r.body, &got) != nil || got.EstimatedTokens <= 10 {
				t.Fatalf("preflight %d %s, want 200 with budget_remaining 0", r.status, r.body)
			}
			want := fmt.Sprintf(`{"session_id":%q,"reservation_id":"","estimated_tokens":%d,"budget_remaining":0,"is_free_preview":false,`+
				`"system_message":"","history":[],"error":{"code":"budget_exhausted","estimated_tokens":%d,`+
				`"message":"Token budget exhausted: 10 tokens remain and this turn needs about %d.","remaining":10}}`,
				c.sessionID, got.EstimatedTokens, got.EstimatedTokens, got.EstimatedTokens)
			if strings.TrimSpace(string(r.body)) != want {
				t.Fatalf("body\n%s\nwant\n%s", r.body, want)
			}
			if n := sessions(); n != 1 {
				t.Errorf("%d sessions, want the first one only", n)
			}
			e.mustLedger(e.alice.ID, 300, 0)
			// The answer's reservation_id names none: an abort with it is
			// refused, and stores and charges nothing.
			abort := fmt.Sprintf(`{"session_id":%q,"reservation_id":"","partial_messages":[{"role":"user","content_blocks":[{"type":"text","text":"and my rotation?"}]}]}`, pf.SessionID)
			if r := e.post(e.alice.key, "/v1/chat/abort", abort, nil, nil); r.status != 400 || !strings.Contains(string(r.body), "reservation_id") {
				t.Fatalf("abort with no reservation: %d %s", r.status, r.body)
			}
			if h := mustStoredHistory(t, e, pf.SessionID); len(h) != 2 {
				t.Errorf("stored %s, want the first exchange only", mustJSON(t, h))
			}
			e.mustLedger(e.alice.ID, 300, 0)
		})
	}
}

// budgetRefused reports whether r is a preflight the budget refused: a 200
// with budget_remaining 0, no reservation and the error budget_exhausted.
func budgetRefused(r response) bool {
	var b struct {
		ReservationID   string `json:"reservation_id"`
		BudgetRemaining *int64 `json:"budget_remaining"`
		Error           struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	return r.status == 200 && json.Unmarshal(r.body, &b) == nil && b.BudgetRemaining != nil && *b.BudgetRemaining == 0 &&
		b.ReservationID == "" && b.Error.Code == coachd.EBUDGET
}

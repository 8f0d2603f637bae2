package server_test

import (
	"fmt"
	"testing"

	"github.com/coachd/coachd/server"
)

// TestSeed000ResendMonthly: seed 000's route aborts a turn whose model
// stream threw with the user's message as partial_messages (lines
// 668-676), and the user sends it again: a preflight of the same words
// on the session. The monthly message limit counts messages, and one
// sent again after its turn failed is not counted twice (as on the
// stream): with a limit of two, the resend and one more message fit.
func TestSeed000ResendMonthly(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{MonthlyMessages: 2})
	const q = "how do I rank up?"
	user := `{"role":"user","content_blocks":[{"type":"text","text":"` + q + `"}],"content_text":"` + q + `"}`
	pf := seed000Preflight(t, e, q)
	if r := e.post(e.alice.key, "/v1/chat/abort", fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"partial_messages":[%s]}`,
		pf.SessionID, pf.ReservationID, user), nil, nil); r.status != 200 {
		t.Fatalf("abort %d %s", r.status, r.body)
	}
	again := seed000PreflightIn(t, e, q, pf.SessionID)
	if again.ReservationID == "" {
		t.Fatalf("the resend was refused: %+v", again)
	}
	rec := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"messages":[%s,
		{"role":"assistant","content_blocks":[{"type":"text","text":"Boost less."}],"content_text":"Boost less."}],
		"tokens_used":300}`, again.SessionID, again.ReservationID, user)
	if r := e.post(e.alice.key, "/v1/chat/record", rec, nil, nil); r.status != 200 {
		t.Fatalf("record %d %s", r.status, r.body)
	}
	if next := seed000PreflightIn(t, e, "and my rotation?", pf.SessionID); next.ReservationID == "" {
		t.Fatalf("the second message, over the limit of 2 only if the resend counted: %+v", next.BudgetRemaining)
	}
	// The third is over it.
	if over := seed000PreflightIn(t, e, "and my kickoffs?", pf.SessionID); over.ReservationID != "" || over.BudgetRemaining != 0 {
		t.Fatalf("a third message under a limit of 2: %+v", over.ReservationID)
	}
}

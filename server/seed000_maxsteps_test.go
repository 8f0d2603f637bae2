package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/server"
)

// TestSeed000MaxStepsNextTurn: seed 000's route.ts records every tool
// round (lines 650-661, ending with the user's tool results, which keeps
// the reservation open: the loop goes on) and, at MAX_STEPS, sends its
// page "Tool loop exceeded MAX_STEPS" and closes (lines 667-668): no
// final record, no abort. The player's next message is a new preflight
// on the same session (page line 555). It is admitted at once, the
// earlier turn settled at what its rounds recorded, not refused for a
// hold that would last until the reservation expires.
func TestSeed000MaxStepsNextTurn(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{})
	const maxSteps = 3
	pf := seed000Preflight(t, e, "how do I rank up?")
	est := pf.EstimatedTokens
	spent := est / 4 // the rounds' cumulative tokens
	// The edge: the next turn fits the budget less what the first spent,
	// not beside the first turn's hold.
	budget := spent + est + est/2
	if r := e.do(request{method: "PATCH", path: "/v1/users/" + e.alice.ID, key: adminKey, body: fmt.Sprintf(`{"token_budget":%d}`, budget)}); r.status != 200 {
		t.Fatalf("patch budget %d %s", r.status, r.body)
	}
	seed000MaxSteps(t, e, pf, "how do I rank up?", maxSteps, spent)
	// MAX_STEPS: nothing more reaches coachd. The next message:
	var next preflightBody
	r := e.post(e.alice.key, "/v1/chat/preflight", fmt.Sprintf(`{"message":"so what now?","session_id":%q}`, pf.SessionID), nil, &next)
	if r.status != 200 || next.ReservationID == "" || next.BudgetRemaining <= 0 {
		t.Fatalf("the next message after MAX_STEPS: %d %s, want admitted", r.status, r.body)
	}
	var me struct {
		Budget coachd.BudgetStatus `json:"budget"`
	}
	if r := e.do(request{method: "GET", path: "/v1/me", key: e.alice.key}); r.status != 200 || json.Unmarshal(r.body, &me) != nil {
		t.Fatalf("me %d %s", r.status, r.body)
	}
	if me.Budget.TokensUsed != spent || me.Budget.TokensReserved != next.EstimatedTokens {
		t.Fatalf("used %d, held %d; want what the rounds recorded (%d) and the new turn's hold (%d)",
			me.Budget.TokensUsed, me.Budget.TokensReserved, spent, next.EstimatedTokens)
	}
	old, err := e.db.FindReservation(context.Background(), e.alice.ID, pf.ReservationID)
	if err != nil || old.State != coachd.ReservationFinalized || old.Charged != spent || old.Held != 0 {
		t.Fatalf("the MAX_STEPS turn's reservation: %+v %v", old, err)
	}
	if drift, err := e.db.CheckLedger(context.Background()); err != nil || len(drift) > 0 {
		t.Fatalf("ledger: %+v %v", drift, err)
	}
}

// seed000MaxSteps records maxSteps tool rounds of seed 000's route for
// the turn pf admitted (route.ts lines 650-661: each record ends with the
// user's tool results, which keeps the reservation open), spent tokens
// in all, as the route does before it stops at MAX_STEPS with no final
// record and no abort. It returns when it sent the last record.
func seed000MaxSteps(t *testing.T, e *chatEnv, pf preflightBody, question string, maxSteps int, spent int64) time.Time {
	t.Helper()
	pending := question
	var last time.Time
	for step := range maxSteps {
		id := fmt.Sprintf("toolu_%02d", step)
		body := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"messages":[
			{"role":"user","content_blocks":[{"type":"text","text":%q}],"content_text":%q},
			{"role":"assistant","content_blocks":[{"type":"tool_use","id":%q,"name":"get_rank_benchmarks","input":{"rank":"diamond"}}],"content_text":""},
			{"role":"user","content_blocks":[{"type":"tool_result","tool_use_id":%q,"content":{"rank":"diamond"}}],"content_text":""}],
			"tokens_used":%d,"estimated_tokens":%d,"is_free_preview":false}`,
			pf.SessionID, pf.ReservationID, pending, pending, id, id, spent*int64(step+1)/int64(maxSteps), pf.EstimatedTokens)
		last = time.Now()
		if r := e.post(e.alice.key, "/v1/chat/record", body, nil, nil); r.status != 200 {
			t.Fatalf("record of round %d: %d %s", step, r.status, r.body)
		}
		pending = ""
	}
	return last
}

package server_test

import (
	"fmt"
	"testing"

	"github.com/coachd/coachd/server"
)

// TestSeed000AbortAfterFinalRecord: seed 000's route records a turn
// answered in its first round with "pendingUserMessage" still the
// turn's message (lines 619-630), then sends its page message_stop and
// closes. When that throws (the player closed the page as the reply
// ended) or the record's answer was lost after coachd stored it, its
// catch aborts with "partial_messages: [the pending user message]"
// (lines 668-676). The turn was recorded and settled: the abort stores
// nothing again, else the player's question stood twice in the session,
// the second time unanswered, and every later turn's history carried it.
func TestSeed000AbortAfterFinalRecord(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{})
	const question = "how do I rank up?"
	pf := seed000Preflight(t, e, question)
	userMsg := fmt.Sprintf(`{"role":"user","content_blocks":[{"type":"text","text":%q}],"content_text":%q}`, question, question)
	body := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"messages":[%s,
		{"role":"assistant","content_blocks":[{"type":"text","text":"Boost less on kickoff."}],"content_text":"Boost less on kickoff."}],
		"tokens_used":300,"estimated_tokens":%d,"is_free_preview":false}`, pf.SessionID, pf.ReservationID, userMsg, pf.EstimatedTokens)
	if r := e.post(e.alice.key, "/v1/chat/record", body, nil, nil); r.status != 200 {
		t.Fatalf("record %d %s", r.status, r.body)
	}
	stored := mustJSON(t, mustStoredHistory(t, e, pf.SessionID))
	abort := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"partial_messages":[%s]}`, pf.SessionID, pf.ReservationID, userMsg)
	if r := e.post(e.alice.key, "/v1/chat/abort", abort, nil, nil); r.status != 200 {
		t.Fatalf("abort %d %s", r.status, r.body)
	}
	if got := mustJSON(t, mustStoredHistory(t, e, pf.SessionID)); got != stored {
		t.Fatalf("after the abort the session holds\n%s\nwant what the record stored\n%s", got, stored)
	}
	next := seed000PreflightIn(t, e, "and my rotation?", pf.SessionID)
	if got := mustJSON(t, next.History); got != stored {
		t.Fatalf("next turn's history\n%s\nwant\n%s", got, stored)
	}
}

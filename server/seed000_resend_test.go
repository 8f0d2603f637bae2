package server_test

import (
	"fmt"
	"testing"

	"github.com/coachd/coachd/server"
)

// TestSeed000OwnLoopResend: seed 000's route, when the model's stream
// throws, aborts with the user's message as partial_messages (lines
// 668-676); the user then sends it again, and the route preflights it
// and sends "[...preflight.history, { role: "user", content: message }]"
// (line 586), then records that user message with the reply. The
// history ended with the aborted message, so the model saw it twice, and
// it was stored twice. Now the preflight leaves out the unanswered
// message the client sends again, and the record does not store it again.
func TestSeed000OwnLoopResend(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{})
	const q = "how do I rank up?"
	user := `{"role":"user","content_blocks":[{"type":"text","text":"` + q + `"}],"content_text":"` + q + `"}`
	pf := seed000Preflight(t, e, q)
	if r := e.post(e.alice.key, "/v1/chat/abort", fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"partial_messages":[%s]}`,
		pf.SessionID, pf.ReservationID, user), nil, nil); r.status != 200 {
		t.Fatalf("abort %d %s", r.status, r.body)
	}
	var again preflightBody
	if r := e.post(e.alice.key, "/v1/chat/preflight", fmt.Sprintf(`{"message":%q,"session_id":%q}`, q, pf.SessionID), nil, &again); r.status != 200 {
		t.Fatalf("preflight again %d %s", r.status, r.body)
	}
	if n := len(again.History); n != 0 {
		t.Errorf("history %s: the client appends the message itself, so the model would see it twice", mustJSON(t, again.History))
	}
	rec := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"messages":[%s,
		{"role":"assistant","content_blocks":[{"type":"text","text":"Boost less."}],"content_text":"Boost less."}],
		"tokens_used":300,"estimated_tokens":%d,"is_free_preview":false}`, again.SessionID, again.ReservationID, user, again.EstimatedTokens)
	if r := e.post(e.alice.key, "/v1/chat/record", rec, nil, nil); r.status != 200 {
		t.Fatalf("record %d %s", r.status, r.body)
	}
	if h := mustStoredHistory(t, e, pf.SessionID); len(h) != 2 {
		t.Errorf("stored %s, want the question once and its reply", mustJSON(t, h))
	}

	// The same words after the reply: a new message, kept.
	third := seed000PreflightIn(t, e, q, pf.SessionID)
	if n := len(third.History); n != 2 {
		t.Fatalf("history %s, want the first exchange", mustJSON(t, third.History))
	}
	rec = fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"messages":[%s,
		{"role":"assistant","content_blocks":[{"type":"text","text":"Still boost less."}],"content_text":"Still boost less."}],
		"tokens_used":300}`, third.SessionID, third.ReservationID, user)
	if r := e.post(e.alice.key, "/v1/chat/record", rec, nil, nil); r.status != 200 {
		t.Fatalf("record %d %s", r.status, r.body)
	}
	if h := mustStoredHistory(t, e, pf.SessionID); len(h) != 4 {
		t.Errorf("stored %s, want two exchanges", mustJSON(t, h))
	}
}

// seed000PreflightIn is seed000Preflight in the session sessionID.
func seed000PreflightIn(t *testing.T, e *chatEnv, message, sessionID string) preflightBody {
	t.Helper()
	var pf preflightBody
	if r := e.post(e.alice.key, "/v1/chat/preflight", fmt.Sprintf(`{"message":%q,"session_id":%q}`, message, sessionID), nil, &pf); r.status != 200 {
		t.Fatalf("preflight %d %s", r.status, r.body)
	}
	return pf
}

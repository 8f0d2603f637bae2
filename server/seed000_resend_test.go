package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/coachd/coachd"
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

// TestSeed000OwnLoopResendAfterToolRound: seed 000's route records a tool
// round as [user message, tool_use, tool_results] (lines 650-661), then
// clears pendingUserMessage; when the next round's stream throws it
// aborts with no partial_messages (lines 668-676), so the stored turn
// ends with the tool results. The user sends the message again: the
// preflight's history still held it (the route adds it once more, line
// 586), and its record stored it a second time. Now the unanswered turn
// is left out of the history, as a message alone is, and the message is
// stored once, its first try's tool round kept before the reply.
func TestSeed000OwnLoopResendAfterToolRound(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{})
	const q = "compare me with diamond"
	user := `{"role":"user","content_blocks":[{"type":"text","text":"` + q + `"}],"content_text":"` + q + `"}`
	count := func(h []coachd.ModelMessage) int {
		n := 0
		for _, m := range h {
			for _, b := range m.Blocks {
				if m.Role == coachd.RoleUser && b.Type == coachd.BlockText && b.Text == q {
					n++
				}
			}
		}
		return n
	}
	pf := seed000Preflight(t, e, q)
	round := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"messages":[%s,
		{"role":"assistant","content_blocks":[{"type":"tool_use","id":"toolu_01","name":"get_rank_benchmarks","input":{"rank":"diamond"}}],"content_text":""},
		{"role":"user","content_blocks":[{"type":"tool_result","tool_use_id":"toolu_01","content":"{\"rank\":\"diamond\"}"}],"content_text":""}],
		"tokens_used":300,"estimated_tokens":%d,"is_free_preview":false}`, pf.SessionID, pf.ReservationID, user, pf.EstimatedTokens)
	if r := e.post(e.alice.key, "/v1/chat/record", round, nil, nil); r.status != 200 {
		t.Fatalf("record %d %s", r.status, r.body)
	}
	if r := e.post(e.alice.key, "/v1/chat/abort", fmt.Sprintf(`{"session_id":%q,"reservation_id":%q}`, pf.SessionID, pf.ReservationID), nil, nil); r.status != 200 {
		t.Fatalf("abort %d %s", r.status, r.body)
	}

	again := seed000PreflightIn(t, e, q, pf.SessionID)
	if n := count(again.History); n != 0 {
		t.Errorf("history %s holds the message %d times: the client adds it once more", mustJSON(t, again.History), n)
	}
	rec := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"messages":[%s,
		{"role":"assistant","content_blocks":[{"type":"text","text":"Boost less."}],"content_text":"Boost less."}],
		"tokens_used":300,"estimated_tokens":%d,"is_free_preview":false}`, again.SessionID, again.ReservationID, user, again.EstimatedTokens)
	if r := e.post(e.alice.key, "/v1/chat/record", rec, nil, nil); r.status != 200 {
		t.Fatalf("record %d %s", r.status, r.body)
	}
	h := mustStoredHistory(t, e, pf.SessionID)
	if n := count(h); n != 1 || len(h) != 4 {
		t.Errorf("stored %s: the message %d times, want once, then the tool round and the reply", mustJSON(t, h), n)
	}

	// The same words after the reply: a new message, kept.
	third := seed000PreflightIn(t, e, q, pf.SessionID)
	if n := count(third.History); n != 1 || len(third.History) != 4 {
		t.Fatalf("history %s, want the first exchange", mustJSON(t, third.History))
	}
	rec = fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"messages":[%s,
		{"role":"assistant","content_blocks":[{"type":"text","text":"Still boost less."}],"content_text":"Still boost less."}],
		"tokens_used":300}`, third.SessionID, third.ReservationID, user)
	if r := e.post(e.alice.key, "/v1/chat/record", rec, nil, nil); r.status != 200 {
		t.Fatalf("record %d %s", r.status, r.body)
	}
	if h := mustStoredHistory(t, e, pf.SessionID); count(h) != 2 || len(h) != 6 {
		t.Errorf("stored %s, want two exchanges", mustJSON(t, h))
	}
}

// TestOwnLoopResendAfterPartialReply: an own loop that aborts with the
// reply that broke off (partial_messages [message, partial reply]) and
// then sends the message again: neither is in the history, the message
// is stored once, and the broken reply is not replayed.
func TestOwnLoopResendAfterPartialReply(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{})
	const q = "how do I rank up?"
	user := `{"role":"user","content_blocks":[{"type":"text","text":"` + q + `"}],"content_text":"` + q + `"}`
	pf := seed000Preflight(t, e, q)
	if r := e.post(e.alice.key, "/v1/chat/abort", fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"tokens_used":50,"partial_messages":[%s,
		{"role":"assistant","content_blocks":[{"type":"text","text":"Work on your"}]}]}`, pf.SessionID, pf.ReservationID, user), nil, nil); r.status != 200 {
		t.Fatalf("abort %d %s", r.status, r.body)
	}
	again := seed000PreflightIn(t, e, q, pf.SessionID)
	if len(again.History) != 0 {
		t.Errorf("history %s, want none: the client adds the message itself", mustJSON(t, again.History))
	}
	rec := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"messages":[%s,
		{"role":"assistant","content_blocks":[{"type":"text","text":"Boost less."}]}],"tokens_used":300}`, again.SessionID, again.ReservationID, user)
	if r := e.post(e.alice.key, "/v1/chat/record", rec, nil, nil); r.status != 200 {
		t.Fatalf("record %d %s", r.status, r.body)
	}
	next := seed000PreflightIn(t, e, "and my rotation?", pf.SessionID)
	if got := mustJSON(t, next.History); len(next.History) != 2 || strings.Contains(got, "Work on your") || strings.Count(got, q) != 1 {
		t.Errorf("history %s, want the question once and its reply", got)
	}
}

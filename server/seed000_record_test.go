package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/server"
)

// Seed 000's route.ts runs its own model loop and records every round
// through POST /v1/chat/record with the bodies below (seed 000 lines
// 595-663). coachd stores them in a form it can replay to the Messages
// API on every later turn.

// seed000Preflight is route.ts's chatPreflight (seed 000 lines 469-480, 564).
func seed000Preflight(t *testing.T, e *chatEnv, message string) preflightBody {
	t.Helper()
	var pf preflightBody
	body := fmt.Sprintf(`{"message":%q}`, message)
	if r := e.post(e.alice.key, "/v1/chat/preflight", body, nil, &pf); r.status != 200 {
		t.Fatalf("preflight %d %s", r.status, r.body)
	}
	return pf
}

// mustStoredHistory is the session's stored messages as the Messages API
// would get them were they sent as they are, checked with the fake API's
// rules (roles alternate, every tool_use answered right after).
func mustStoredHistory(t *testing.T, e *chatEnv, sessionID string) []coachd.ModelMessage {
	t.Helper()
	msgs, err := e.db.History(context.Background(), e.alice.ID, sessionID)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]coachd.ModelMessage, len(msgs))
	for i, m := range msgs {
		out[i] = coachd.ModelMessage{Role: m.Role, Blocks: m.Blocks}
	}
	if err := anthropictest.ValidateHistory(out); err != nil {
		t.Fatalf("stored history %s: %v", mustJSON(t, out), err)
	}
	return out
}

// TestSeed000RecordToolResultObject: seed 000 records the tool round with
// "content: result.result" (line 641), the JSON object coachd's
// /v1/tools/execute answered, or "const errorPayload = { error: "Tool
// execution failed" }" (lines 643-645). The API takes a string or blocks
// there, so coachd stores the object's JSON text.
func TestSeed000RecordToolResultObject(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{})
	for _, content := range []string{
		`{"rank":"diamond","boost_per_minute":380}`, // result.result (line 641)
		`{"error":"Tool execution failed"}`,         // errorPayload (lines 643-645)
	} {
		pf := seed000Preflight(t, e, "how do I rank up?")
		body := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"messages":[
			{"role":"user","content_blocks":[{"type":"text","text":"how do I rank up?"}],"content_text":"how do I rank up?"},
			{"role":"assistant","content_blocks":[{"type":"tool_use","id":"toolu_01","name":"get_rank_benchmarks","input":{"rank":"diamond"}}],"content_text":""},
			{"role":"user","content_blocks":[{"type":"tool_result","tool_use_id":"toolu_01","content":%s}],"content_text":""}],
			"tokens_used":300,"estimated_tokens":%d,"is_free_preview":false}`,
			pf.SessionID, pf.ReservationID, content, pf.EstimatedTokens)
		if r := e.post(e.alice.key, "/v1/chat/record", body, nil, nil); r.status != 200 {
			t.Fatalf("seed 000's tool-round record with tool_result content %s: %d %s", content, r.status, r.body)
		}
		h := mustStoredHistory(t, e, pf.SessionID)
		if len(h) != 3 || len(h[2].Blocks) != 1 {
			t.Fatalf("stored %s", mustJSON(t, h))
		}
		if got, want := string(h[2].Blocks[0].Content), mustJSON(t, content); got != want { // the object's JSON text, as a JSON string
			t.Errorf("tool_result content %s, want %s", got, want)
		}
	}
}

// TestSeed000RecordThinking: seed 000 streams with "thinking: { type:
// "enabled", budget_tokens: 2048 }" (line 595) and records "{ role:
// "assistant", content_blocks: finalMessage.content, content_text:
// finalText }" (lines 625, 655), which starts with the model's signed
// thinking block. coachd cannot check the signature, and the API refuses
// a forged one on every later turn: the thinking is left out of what is
// stored (the API does not need an earlier turn's thinking).
func TestSeed000RecordThinking(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{})
	pf := seed000Preflight(t, e, "how do I rank up?")
	body := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"messages":[
		{"role":"user","content_blocks":[{"type":"text","text":"how do I rank up?"}],"content_text":"how do I rank up?"},
		{"role":"assistant","content_blocks":[
			{"type":"thinking","thinking":"The player asks about ranking up.","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"},
			{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj"},
			{"type":"text","text":"Watch your boost.","citations":null}],"content_text":"Watch your boost."}],
		"tokens_used":300,"estimated_tokens":%d,"is_free_preview":%t}`,
		pf.SessionID, pf.ReservationID, pf.EstimatedTokens, pf.IsFreePreview)
	if r := e.post(e.alice.key, "/v1/chat/record", body, nil, nil); r.status != 200 {
		t.Fatalf("seed 000's record of finalMessage.content with thinking on: %d %s", r.status, r.body)
	}
	h := mustStoredHistory(t, e, pf.SessionID)
	if len(h) != 2 || len(h[1].Blocks) != 1 || h[1].Blocks[0].Type != coachd.BlockText || h[1].Blocks[0].Text != "Watch your boost." {
		t.Fatalf("stored %s, want the assistant's text without its thinking", mustJSON(t, h))
	}
	// The next turn's history, what the seed sends the model, has none either.
	next := seed000Preflight(t, e, "and then?")
	for _, m := range next.History {
		for _, b := range m.Blocks {
			if b.Type == coachd.BlockThinking || b.Type == coachd.BlockRedactedThinking {
				t.Fatalf("preflight history %s", mustJSON(t, next.History))
			}
		}
	}
}

// TestSeed000RecordAfterToolRound: after a tool round seed 000 sets
// "pendingUserMessage = """ (line 663), and the next record (the final
// one, lines 619-630, or another tool round, 650-661) starts with "{
// role: "user", content_blocks: [{ type: "text", text: pendingUserMessage
// }], content_text: pendingUserMessage }": a user message with an empty
// text. The API refuses an empty text block, so coachd leaves the message
// out, and the stored turn stays valid: user, tool_use, tool_result,
// answer.
func TestSeed000RecordAfterToolRound(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{})
	pf := seed000Preflight(t, e, "how do I rank up?")
	round := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"messages":[
		{"role":"user","content_blocks":[{"type":"text","text":"how do I rank up?"}],"content_text":"how do I rank up?"},
		{"role":"assistant","content_blocks":[{"type":"tool_use","id":"toolu_01","name":"get_rank_benchmarks","input":{"rank":"diamond"}}],"content_text":""},
		{"role":"user","content_blocks":[{"type":"tool_result","tool_use_id":"toolu_01","content":"{\"rank\":\"diamond\"}"}],"content_text":""}],
		"tokens_used":300,"estimated_tokens":%d,"is_free_preview":false}`,
		pf.SessionID, pf.ReservationID, pf.EstimatedTokens)
	if r := e.post(e.alice.key, "/v1/chat/record", round, nil, nil); r.status != 200 {
		t.Fatalf("tool round record: %d %s", r.status, r.body)
	}
	final := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"messages":[
		{"role":"user","content_blocks":[{"type":"text","text":""}],"content_text":""},
		{"role":"assistant","content_blocks":[{"type":"text","text":"Your boost use is below Diamond average."}],"content_text":"Your boost use is below Diamond average."}],
		"tokens_used":450,"estimated_tokens":%d,"is_free_preview":%t}`,
		pf.SessionID, pf.ReservationID, pf.EstimatedTokens, pf.IsFreePreview)
	if r := e.post(e.alice.key, "/v1/chat/record", final, nil, nil); r.status != 200 {
		t.Fatalf("seed 000's final record after a tool round: %d %s", r.status, r.body)
	}
	h := mustStoredHistory(t, e, pf.SessionID)
	var got []string
	for _, m := range h {
		got = append(got, string(m.Role)+":"+m.Blocks[0].Type)
	}
	if want := "[user:text assistant:tool_use user:tool_result assistant:text]"; fmt.Sprint(got) != want {
		t.Fatalf("stored %v, want %s", got, want)
	}
}

// TestSeed000RecordTurn plays a whole turn of seed 000's loop with
// thinking on and two tool rounds, one tool failing: every record is
// accepted, and the stored history is one the API takes as it is.
func TestSeed000RecordTurn(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{})
	pf := seed000Preflight(t, e, "how do I rank up?")
	thinking := `{"type":"thinking","thinking":"Let me look.","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}`
	// record is one of route.ts's chatRecord calls: the pending user
	// message, finalMessage.content, and the tool results if any.
	record := func(pending, assistant, results string, tokens int) {
		t.Helper()
		msgs := []string{
			fmt.Sprintf(`{"role":"user","content_blocks":[{"type":"text","text":%q}],"content_text":%q}`, pending, pending),
			`{"role":"assistant","content_blocks":[` + thinking + `,` + assistant + `],"content_text":""}`,
		}
		if results != "" {
			msgs = append(msgs, `{"role":"user","content_blocks":[`+results+`],"content_text":""}`)
		}
		body := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"messages":[%s],"tokens_used":%d,"estimated_tokens":%d,"is_free_preview":false}`,
			pf.SessionID, pf.ReservationID, strings.Join(msgs, ","), tokens, pf.EstimatedTokens)
		if r := e.post(e.alice.key, "/v1/chat/record", body, nil, nil); r.status != 200 {
			t.Fatalf("record: %d %s", r.status, r.body)
		}
	}
	record("how do I rank up?",
		`{"type":"tool_use","id":"toolu_01","name":"get_rank_benchmarks","input":{"rank":"diamond"}}`,
		`{"type":"tool_result","tool_use_id":"toolu_01","content":{"rank":"diamond","boost_per_minute":380}}`, 300)
	record("",
		`{"type":"tool_use","id":"toolu_02","name":"get_replay","input":{}}`,
		`{"type":"tool_result","tool_use_id":"toolu_02","content":{"error":"Tool execution failed"}}`, 600)
	record("", `{"type":"text","text":"Boost less on kickoff."}`, "", 900)

	h := mustStoredHistory(t, e, pf.SessionID)
	if len(h) != 6 {
		t.Fatalf("stored %s", mustJSON(t, h))
	}
	if got := h[4].Blocks[0].ResultText(); got != `{"error":"Tool execution failed"}` {
		t.Errorf("failed tool's result %q", got)
	}
	var next preflightBody
	if r := e.post(e.alice.key, "/v1/chat/preflight", fmt.Sprintf(`{"message":"thanks","session_id":%q}`, pf.SessionID), nil, &next); r.status != 200 {
		t.Fatalf("next preflight %d %s", r.status, r.body)
	}
	if got, want := mustJSON(t, next.History), mustJSON(t, h); got != want {
		t.Errorf("next turn's history\n%s\nwant the stored\n%s", got, want)
	}
}

// TestSeed000RecordEmptyReply: the Messages API may end a turn with
// stop_reason end_turn and no content at all (most often right after
// tool results), and seed 000 records "content_blocks:
// finalMessage.content" as it is (lines 619-630): an assistant message
// with no blocks and content_text "". Refused, the seed's route throws
// "Record failed" and aborts a turn whose rounds were fine; like a reply
// of only thinking, it is left out, and the turn is settled.
func TestSeed000RecordEmptyReply(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{})
	pf := seed000Preflight(t, e, "how do I rank up?")
	round := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"messages":[
		{"role":"user","content_blocks":[{"type":"text","text":"how do I rank up?"}],"content_text":"how do I rank up?"},
		{"role":"assistant","content_blocks":[{"type":"tool_use","id":"toolu_01","name":"get_rank_benchmarks","input":{"rank":"diamond"}}],"content_text":""},
		{"role":"user","content_blocks":[{"type":"tool_result","tool_use_id":"toolu_01","content":{"rank":"diamond"}}],"content_text":""}],
		"tokens_used":300,"estimated_tokens":%d,"is_free_preview":false}`,
		pf.SessionID, pf.ReservationID, pf.EstimatedTokens)
	if r := e.post(e.alice.key, "/v1/chat/record", round, nil, nil); r.status != 200 {
		t.Fatalf("tool round record: %d %s", r.status, r.body)
	}
	final := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"messages":[
		{"role":"user","content_blocks":[{"type":"text","text":""}],"content_text":""},
		{"role":"assistant","content_blocks":[],"content_text":""}],
		"tokens_used":420,"estimated_tokens":%d,"is_free_preview":false}`,
		pf.SessionID, pf.ReservationID, pf.EstimatedTokens)
	var rr struct {
		TokensCharged int64 `json:"tokens_charged"`
	}
	if r := e.post(e.alice.key, "/v1/chat/record", final, nil, &rr); r.status != 200 || rr.TokensCharged != 420 {
		t.Fatalf("seed 000's final record of an empty reply: %d %s", r.status, r.body)
	}
	if h := mustStoredHistory(t, e, pf.SessionID); len(h) != 3 {
		t.Fatalf("stored %s", mustJSON(t, h))
	}
	e.mustLedger(e.alice.ID, 420, 0)
	// A user message with nothing in it is still refused.
	bad := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"messages":[{"role":"user","content_blocks":[],"content_text":""}],"tokens_used":420}`,
		pf.SessionID, pf.ReservationID)
	if r := e.post(e.alice.key, "/v1/chat/record", bad, nil, nil); r.status != 400 || !strings.Contains(string(r.body), "messages[0].content_blocks") {
		t.Fatalf("empty user message: %d %s", r.status, r.body)
	}
}

// TestSeed000PreflightFreePreview: seed 000's route answers 402 "Budget
// exhausted" when "preflight.budget_remaining <= 0" (lines 566-568),
// before it runs the turn or records it. A free preview turn of a user
// without budget must get past that check, or the seed's client never
// serves a free preview (and each try used one up): budget_remaining is
// what the free turn may spend.
func TestSeed000PreflightFreePreview(t *testing.T) {
	ag := agent.DefaultAgent()
	ag.FreePreviewTurns = 1
	e := MustChatEnv(t, ag)
	zero := int64(0)
	_, key, err := e.admin.CreateUser(context.Background(), "carol", &zero)
	if err != nil {
		t.Fatal(err)
	}
	var pf preflightBody
	if r := e.post(key, "/v1/chat/preflight", `{"message":"how do I rank up?","replay_id":"replay-42"}`, nil, &pf); r.status != 200 {
		t.Fatalf("preflight %d %s", r.status, r.body)
	}
	if !pf.IsFreePreview || pf.BudgetRemaining <= 0 {
		t.Fatalf("free preview preflight: is_free_preview %t, budget_remaining %d: seed 000 answers 402", pf.IsFreePreview, pf.BudgetRemaining)
	}
	// The free turn used, the next is refused as before.
	if r := e.post(key, "/v1/chat/preflight", `{"message":"and again?"}`, nil, nil); !budgetRefused(r) {
		t.Fatalf("second preflight %d %s", r.status, r.body)
	}
}

// TestSeed000PreflightReplayID: seed 000's route preflights with "{
// message, session_id, replay_id }" (line 564) and sends the model
// "system: preflight.system_message" (line 593) and the player's words,
// nothing else: the replay the player is looking at reaches the model
// only through the system message, as the rlcoach pack's prompt says it
// does ("it is the replay_id their client sent").
func TestSeed000PreflightReplayID(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{})
	var pf preflightBody
	if r := e.post(e.alice.key, "/v1/chat/preflight", `{"message":"what went wrong here?","replay_id":"replay-42"}`, nil, &pf); r.status != 200 {
		t.Fatalf("preflight %d %s", r.status, r.body)
	}
	if !strings.Contains(pf.SystemMessage, `"replay-42"`) {
		t.Fatalf("system_message does not name the replay:\n%s", pf.SystemMessage)
	}
	if got := mustJSON(t, pf.TurnContext); !strings.Contains(got, "replay-42") {
		t.Errorf("turn_context does not name the replay: %s", got)
	}
	// Without one, nothing is said of a replay.
	var plain preflightBody
	e.post(e.alice.key, "/v1/chat/preflight", `{"message":"hi"}`, nil, &plain)
	if strings.Contains(plain.SystemMessage, "replay") {
		t.Errorf("system_message without a replay_id: %s", plain.SystemMessage)
	}
}

// TestRecordCitationsLeftOut: a recorded text block's citations are left
// out, as its thinking is: what they point at cannot be checked, and a
// list the API refuses (here a citation of no known type) would be sent
// back on every later turn. The text stays.
func TestRecordCitationsLeftOut(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{})
	pf := seed000Preflight(t, e, "what does the guide say?")
	body := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"messages":[
		{"role":"user","content_blocks":[{"type":"text","text":"what does the guide say?"}]},
		{"role":"assistant","content_blocks":[{"type":"text","text":"Rotate back post.","citations":[{"type":"forged_location","cited_text":"x","document_index":99}]}]}],
		"tokens_used":300}`, pf.SessionID, pf.ReservationID)
	if r := e.post(e.alice.key, "/v1/chat/record", body, nil, nil); r.status != 200 {
		t.Fatalf("record: %d %s", r.status, r.body)
	}
	h := mustStoredHistory(t, e, pf.SessionID)
	if len(h) != 2 || len(h[1].Blocks) != 1 || h[1].Blocks[0].Text != "Rotate back post." {
		t.Fatalf("stored %s", mustJSON(t, h))
	}
	if raw := mustJSON(t, h); strings.Contains(raw, "citations") || strings.Contains(raw, "forged_location") {
		t.Errorf("the citations were stored, to be sent on every later turn: %s", raw)
	}
}

// TestSeed000PreflightExactFit: seed 000's route answers 402 "Budget
// exhausted" when "preflight.budget_remaining <= 0" (lines 566-568), and
// then neither runs nor aborts the turn. coachd admits a turn whose
// estimate is exactly what the budget has left (estimate <= remaining):
// its budget_remaining must not read 0, or the seed refuses a turn that
// fits and leaves its hold to block the user until it expires.
func TestSeed000PreflightExactFit(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{})
	ctx := context.Background()
	const msg = "how do I rank up?"
	first := seed000Preflight(t, e, msg)
	if r := e.post(e.alice.key, "/v1/chat/abort", fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"tokens_used":0}`, first.SessionID, first.ReservationID), nil, nil); r.status != 200 {
		t.Fatalf("abort %d %s", r.status, r.body)
	}
	budget := first.EstimatedTokens
	if _, err := e.admin.UpdateUser(ctx, e.alice.ID, coachd.UserUpdate{TokenBudget: &budget}); err != nil {
		t.Fatal(err)
	}
	pf := seed000Preflight(t, e, msg)
	if pf.EstimatedTokens != budget {
		t.Fatalf("estimate %d, want %d (the same message on a new session)", pf.EstimatedTokens, budget)
	}
	if pf.BudgetRemaining <= 0 {
		t.Fatalf("exact fit: budget_remaining %d: seed 000 answers 402 to a turn coachd admitted", pf.BudgetRemaining)
	}
	// The turn runs and is recorded; the budget is then used up.
	body := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"messages":[
		{"role":"user","content_blocks":[{"type":"text","text":%q}],"content_text":%q},
		{"role":"assistant","content_blocks":[{"type":"text","text":"Watch your boost."}],"content_text":"Watch your boost."}],
		"tokens_used":%d,"estimated_tokens":%d,"is_free_preview":false}`, pf.SessionID, pf.ReservationID, msg, msg, budget, budget)
	var rec struct {
		BudgetRemaining int64 `json:"budget_remaining"`
	}
	if r := e.post(e.alice.key, "/v1/chat/record", body, nil, &rec); r.status != 200 || rec.BudgetRemaining != 0 {
		t.Fatalf("record %d %s", r.status, r.body)
	}
	if r := e.post(e.alice.key, "/v1/chat/preflight", `{"message":"and again?"}`, nil, nil); !budgetRefused(r) {
		t.Fatalf("preflight with nothing left: %d %s", r.status, r.body)
	}
	e.mustLedger(e.alice.ID, budget, 0)
}

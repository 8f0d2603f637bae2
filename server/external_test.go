package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/server"
)

// post sends body as JSON and decodes a 200 answer into out.
func (e *env) post(key, path, body string, header map[string]string, out any) response {
	e.t.Helper()
	r := e.do(request{method: "POST", path: path, key: key, body: body, header: header})
	if out != nil && r.status == http.StatusOK {
		if err := json.Unmarshal(r.body, out); err != nil {
			e.t.Fatalf("%s: %v", path, err)
		}
	}
	return r
}

func (e *env) mustLedger(userID string, used, reserved int64) {
	e.t.Helper()
	drift, err := e.db.CheckLedger(context.Background())
	if err != nil || len(drift) > 0 {
		e.t.Fatalf("drift %+v %v", drift, err)
	}
	st, err := e.db.BudgetStatus(context.Background(), userID)
	if err != nil {
		e.t.Fatal(err)
	}
	if st.TokensUsed != used || st.TokensReserved != reserved {
		e.t.Fatalf("used %d reserved %d, want %d %d", st.TokensUsed, st.TokensReserved, used, reserved)
	}
}

type preflightBody struct {
	agent.Preflight
}

// TestExternalLoop plays an app that runs its own model loop.
func TestExternalLoop(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{})
	key := e.alice.key

	var pf preflightBody
	if r := e.post(key, "/v1/chat/preflight", `{"message":"remember I drive mornings"}`, nil, &pf); r.status != 200 {
		t.Fatalf("preflight %d %s", r.status, r.body)
	}
	if pf.ReservationID == "" || pf.EstimatedTokens <= 0 || pf.SystemMessage == "" || len(pf.History) != 0 || pf.BudgetRemaining != 100000-pf.EstimatedTokens {
		t.Fatalf("preflight %+v", pf)
	}
	e.mustLedger(e.alice.ID, 0, pf.EstimatedTokens)

	var tl struct{ Tools []coachd.ToolSpec }
	if r := e.do(request{method: "GET", path: "/v1/tools", key: key}); r.status != 200 || json.Unmarshal(r.body, &tl) != nil || len(tl.Tools) == 0 {
		t.Fatalf("tools %d %s", r.status, r.body)
	}

	// Round 1: the model called save_note; the app runs it through coachd.
	// The result is the tool's JSON itself (seed 000 passes it on).
	var ex struct {
		Result  json.RawMessage
		IsError bool `json:"is_error"`
	}
	input := `{"note_type":"preference","title":"Mornings","content":"drives mornings"}`
	r := e.post(key, "/v1/tools/execute", fmt.Sprintf(`{"tool_name":"save_note","tool_input":%s,"session_id":%q}`, input, pf.SessionID), nil, &ex)
	if r.status != 200 || ex.IsError || !json.Valid(ex.Result) || ex.Result[0] != '{' {
		t.Fatalf("execute %d %s", r.status, r.body)
	}
	var bad agent.ExecResult
	if r := e.post(key, "/v1/tools/execute", `{"tool_name":"save_note","tool_input":{}}`, nil, &bad); r.status != 200 || !bad.IsError {
		t.Fatalf("invalid input: %d %s", r.status, r.body)
	}
	// final: false keeps the reservation open for the next round.
	round := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"tokens_used":400,"final":false,"messages":[
		{"role":"user","content_blocks":[{"type":"text","text":"remember I drive mornings"}]},
		{"role":"assistant","content_blocks":[{"type":"tool_use","id":"toolu_1","name":"save_note","input":%s}]},
		{"role":"user","content_blocks":[{"type":"tool_result","tool_use_id":"toolu_1","content":%q}]}]}`,
		pf.SessionID, pf.ReservationID, input, string(ex.Result))
	if r := e.post(key, "/v1/chat/record", round, map[string]string{"Idempotency-Key": "round-1"}, nil); r.status != 200 {
		t.Fatalf("record round %d %s", r.status, r.body)
	}
	e.mustLedger(e.alice.ID, 400, pf.EstimatedTokens-400)

	// Final record, sent twice (a retry): charged and stored once.
	final := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"tokens_used":650,"final":true,"messages":[
		{"role":"assistant","content_blocks":[{"type":"text","text":"Noted: mornings."}]}]}`, pf.SessionID, pf.ReservationID)
	for range 2 {
		var rr struct {
			State         string `json:"state"`
			TokensCharged int64  `json:"tokens_charged"`
		}
		if r := e.post(key, "/v1/chat/record", final, map[string]string{"Idempotency-Key": "final"}, &rr); r.status != 200 || rr.State != "finalized" || rr.TokensCharged != 650 {
			t.Fatalf("final record %d %s", r.status, r.body)
		}
	}
	if r := e.post(key, "/v1/chat/record", round, map[string]string{"Idempotency-Key": "final"}, nil); r.status != 409 {
		t.Fatalf("reused key: %d %s", r.status, r.body)
	}
	// A key of bytes past ASCII (which HTTP lets through) is refused at
	// the edge, as both stores would not take it alike.
	if r := e.post(key, "/v1/chat/record", round, map[string]string{"Idempotency-Key": "key-\xff"}, nil); r.status != 400 || !strings.Contains(string(r.body), "Idempotency-Key") {
		t.Fatalf("non-ASCII key: %d %s", r.status, r.body)
	}
	e.mustLedger(e.alice.ID, 650, 0)
	msgs, err := e.db.History(context.Background(), e.alice.ID, pf.SessionID)
	if err != nil || len(msgs) != 4 {
		t.Fatalf("history %d %v", len(msgs), err)
	}

	// The next preflight sees the full blocks, in Messages API form.
	var pf2 preflightBody
	e.post(key, "/v1/chat/preflight", fmt.Sprintf(`{"message":"what do you know?","session_id":%q}`, pf.SessionID), nil, &pf2)
	h := pf2.History
	if len(h) != 4 || h[1].Blocks[0].Type != coachd.BlockToolUse || h[2].Blocks[0].Type != coachd.BlockToolResult {
		t.Fatalf("history %+v", h)
	}
	// The app's user leaves: abort with the partial reply and the usage so far.
	abort := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"tokens_used":120,"partial_messages":[
		{"role":"user","content_blocks":[{"type":"text","text":"what do you know?"}]},
		{"role":"assistant","content_blocks":[{"type":"text","text":"You drive in the"}]}]}`, pf.SessionID, pf2.ReservationID)
	if r := e.post(key, "/v1/chat/abort", abort, nil, nil); r.status != 200 {
		t.Fatalf("abort %d %s", r.status, r.body)
	}
	e.mustLedger(e.alice.ID, 770, 0)
	msgs, _ = e.db.History(context.Background(), e.alice.ID, pf.SessionID)
	if last := msgs[len(msgs)-1]; len(msgs) != 6 || !last.Partial {
		t.Fatalf("abort stored %+v", last)
	}
	// Another user cannot record against alice's reservation.
	if r := e.post(e.bob.key, "/v1/chat/record", final, nil, nil); r.status != 404 {
		t.Fatalf("bob record %d %s", r.status, r.body)
	}
}

func TestUserLimits(t *testing.T) {
	t.Run("Rate", func(t *testing.T) {
		e := MustBudgetEnv(t, server.Limits{Rate: coachd.RateLimit{N: 2, Per: time.Hour}})
		for range 2 {
			if r := e.post(e.alice.key, "/v1/chat/preflight", `{"message":"hi"}`, nil, nil); r.status != 200 {
				t.Fatalf("preflight %d %s", r.status, r.body)
			}
		}
		r := e.post(e.alice.key, "/v1/chat/preflight", `{"message":"hi"}`, nil, nil)
		var b struct{ Error map[string]any }
		_ = json.Unmarshal(r.body, &b)
		if r.status != 429 || r.header.Get("Retry-After") == "" || b.Error["code"] != coachd.ERATELIMITED || b.Error["limit"] != 2.0 {
			t.Fatalf("third: %d %v %s", r.status, r.header, r.body)
		}
		if r := e.post(e.bob.key, "/v1/chat/preflight", `{"message":"hi"}`, nil, nil); r.status != 200 {
			t.Fatalf("bob limited by alice: %d", r.status)
		}
		if r := e.do(request{method: "PATCH", path: "/v1/users/" + e.alice.ID, key: adminKey, body: `{"rate_limit":"off"}`}); r.status != 200 {
			t.Fatalf("patch %d %s", r.status, r.body)
		}
		if r := e.post(e.alice.key, "/v1/chat/preflight", `{"message":"hi"}`, nil, nil); r.status != 200 {
			t.Fatalf("after override: %d %s", r.status, r.body)
		}
	})
	t.Run("Monthly", func(t *testing.T) {
		e := MustBudgetEnv(t, server.Limits{MonthlyMessages: 1})
		e.fake.Enqueue(anthropictest.Text("Hi!", 5))
		if s := e.chat(context.Background(), e.alice.key, "", `{"message":"hi"}`); s.status != 200 {
			t.Fatalf("first %d", s.status)
		}
		// On the stream endpoint the limit is an SSE error event (seed 004's
		// shape: type, message, usage, limit) with the 429 status.
		s := e.chat(context.Background(), e.alice.key, "", `{"message":"hi"}`)
		var b map[string]any
		data, _ := strings.CutPrefix(string(s.errBody.body), "event: error\ndata: ")
		_ = json.Unmarshal([]byte(strings.TrimSpace(data)), &b)
		if s.status != 429 || b["type"] != coachd.ERATELIMITED || b["message"] != "Monthly message limit (1) reached." || b["usage"] != 1.0 || b["limit"] != 1.0 {
			t.Fatalf("second %d %s", s.status, s.errBody.body)
		}
		// A client that asks for JSON gets the JSON error body.
		r := e.post(e.alice.key, "/v1/chat/stream", `{"message":"hi"}`, map[string]string{"Accept": "application/json"}, nil)
		var j struct{ Error map[string]any }
		_ = json.Unmarshal(r.body, &j)
		if r.status != 429 || j.Error["usage"] != 1.0 || j.Error["limit"] != 1.0 || r.header.Get("Retry-After") == "" {
			t.Fatalf("JSON %d %s", r.status, r.body)
		}
	})
	t.Run("BudgetAndMe", func(t *testing.T) {
		e := MustBudgetEnv(t, server.Limits{})
		if r := e.do(request{method: "PATCH", path: "/v1/users/" + e.alice.ID, key: adminKey, body: `{"token_budget":10,"monthly_messages":5}`}); r.status != 200 {
			t.Fatalf("patch %d %s", r.status, r.body)
		}
		s := e.chat(context.Background(), e.alice.key, "", `{"message":"hi"}`)
		if s.status != 402 || !strings.Contains(string(s.errBody.body), coachd.EBUDGET) {
			t.Fatalf("stream %d %s", s.status, s.errBody.body)
		}
		r := e.do(request{method: "GET", path: "/v1/me", key: e.alice.key})
		var me struct {
			MonthlyMessages int64               `json:"monthly_messages"`
			Budget          coachd.BudgetStatus `json:"budget"`
		}
		if json.Unmarshal(r.body, &me) != nil || me.Budget.TokenBudget != 10 || me.Budget.Remaining != 10 || me.MonthlyMessages != 5 {
			t.Fatalf("me %s", r.body)
		}
		if r := e.do(request{method: "PATCH", path: "/v1/users/" + e.alice.ID, key: adminKey, body: `{"rate_limit":"lots"}`}); r.status != 400 {
			t.Fatalf("bad rate %d", r.status)
		}
	})
}

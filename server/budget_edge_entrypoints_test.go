package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/mcp"
	"github.com/coachd/coachd/server"
	"github.com/coachd/coachd/sqlstore/pgtest"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestBudgetEdgeEveryEntrypoint: one user's turns start at once through
// every way in (the stream, POST /v1/chat, MCP's chat tool and the own
// loop's preflight and record) under reserve: max, with a budget that
// holds only some of them. However they interleave, the user is never
// charged past the budget, no hold is left, and the ledger balances.
func TestBudgetEdgeEveryEntrypoint(t *testing.T) {
	for name, dsn := range map[string]func(t testing.TB) string{
		"sqlite":   func(t testing.TB) string { return filepath.Join(t.TempDir(), "coachd.db") },
		"postgres": pgtest.NewDatabase,
	} {
		t.Run(name, func(t *testing.T) {
			e, msg, post := mustBudgetEdgeEnv(t, dsn(t))
			var pf preflightBody
			if r := e.post(e.alice.key, "/v1/chat/preflight", fmt.Sprintf(`{"message":%q}`, msg), nil, &pf); r.status != 200 {
				t.Fatalf("preflight %d %s", r.status, r.body)
			}
			abort := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"tokens_used":0}`, pf.SessionID, pf.ReservationID)
			if r := e.post(e.alice.key, "/v1/chat/abort", abort, nil, nil); r.status != 200 {
				t.Fatalf("abort %d %s", r.status, r.body)
			}
			// Room for three holds of eight turns.
			budget := 3*pf.EstimatedTokens + pf.EstimatedTokens/2
			if _, err := e.db.UpdateUser(context.Background(), e.alice.ID, coachd.UserUpdate{TokenBudget: &budget}); err != nil {
				t.Fatal(err)
			}
			body := fmt.Sprintf(`{"message":%q}`, msg)
			turns := []func() string{
				func() string { st, b := post("/v1/chat/stream", body); return fmt.Sprint(st, " ", len(b)) },
				func() string { st, b := post("/v1/chat/stream", body); return fmt.Sprint(st, " ", len(b)) },
				func() string { st, b := post("/v1/chat", body); return fmt.Sprint(st, " ", b) },
				func() string { st, b := post("/v1/chat", body); return fmt.Sprint(st, " ", b) },
				func() string { return mcpTurn(e, msg) },
				func() string { return mcpTurn(e, msg) },
				func() string { return ownLoopTurn(post, body) },
				func() string { return ownLoopTurn(post, body) },
			}
			var wg sync.WaitGroup
			out := make([]string, len(turns))
			for i, f := range turns {
				wg.Go(func() { out[i] = f() })
			}
			wg.Wait()
			drift, err := e.db.CheckLedger(context.Background())
			if err != nil || len(drift) > 0 {
				t.Fatalf("ledger drift %+v %v", drift, err)
			}
			st, err := e.db.BudgetStatus(context.Background(), e.alice.ID)
			if err != nil {
				t.Fatal(err)
			}
			if st.TokensReserved != 0 || st.TokensUsed > budget {
				t.Fatalf("used %d reserved %d of a %d budget; turns: %q", st.TokensUsed, st.TokensReserved, budget, out)
			}
			if st.TokensUsed == 0 {
				t.Fatalf("no turn ran: %q", out)
			}
		})
	}
}

// mustBudgetEdgeEnv is a chat server on dsn for turns at the budget's edge:
// reserve: max, one round of 100 tokens, billed as a tokenizer bills CJK
// (a token a character); msg is such a message and post sends a request
// of alice's from any goroutine, returning its status and body.
func mustBudgetEdgeEnv(t *testing.T, dsn string) (e *chatEnv, msg string, post func(path, body string) (int, string)) {
	ag := agent.DefaultAgent()
	ag.Reserve, ag.MaxTokens, ag.Limits = agent.ReserveMax, 100, agent.Limits{MaxRounds: 1}
	e = mustChatEnvDepsOn(t, dsn, func(d *server.Deps) { d.Limits = server.Limits{} }, ag)
	e.fake.SetScript(func(r *anthropictest.Request) anthropictest.Reply {
		return anthropictest.Text("好的。", 5).WithUsage(coachd.Usage{InputTokens: denseInput(r.Raw), OutputTokens: 100})
	})
	post = func(path, body string) (int, string) {
		req, _ := http.NewRequest("POST", e.url+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+e.alice.key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	return e, strings.Repeat("我每天早上开车去机场。", 40), post
}

// denseInput bills raw as a tokenizer bills CJK: a token a character,
// ASCII at 4 bytes a token.
func denseInput(raw []byte) int64 {
	ascii, other := 0, int64(0)
	for _, r := range string(raw) {
		if r < 0x80 {
			ascii++
		} else {
			other++
		}
	}
	return other + int64(ascii+3)/4
}

// mcpTurn is a turn of MCP's chat tool, for any goroutine.
func mcpTurn(e *chatEnv, msg string) string {
	c := sdk.NewClient(&sdk.Implementation{Name: "desktop", Version: "1"}, nil)
	sess, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: e.url + "/v1/mcp",
		HTTPClient: &http.Client{Transport: keyTransport(e.alice.key)}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		return "mcp connect: " + err.Error()
	}
	defer sess.Close()
	res, err := sess.CallTool(context.Background(), &sdk.CallToolParams{Name: mcp.ChatTool, Arguments: map[string]any{"message": msg}})
	if err != nil {
		return "mcp: " + err.Error()
	}
	return fmt.Sprintf("mcp error=%v %v", res.IsError, res.StructuredContent)
}

// ownLoopTurn is seed 000's own loop: a preflight, then a record of what
// its model call spent, all of its hold.
func ownLoopTurn(post func(path, body string) (int, string), body string) string {
	st, b := post("/v1/chat/preflight", body)
	var pf preflightBody
	if st != 200 || json.Unmarshal([]byte(b), &pf) != nil || pf.ReservationID == "" {
		return fmt.Sprint("preflight ", st, " ", b)
	}
	rec := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"tokens_used":%d,"messages":[
		{"role":"assistant","content_blocks":[{"type":"text","text":"好的。"}]}]}`, pf.SessionID, pf.ReservationID, pf.EstimatedTokens)
	st, b = post("/v1/chat/record", rec)
	return fmt.Sprint("record ", st, " ", b)
}

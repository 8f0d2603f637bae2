package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/client"
	"github.com/coachd/coachd/internal/syncbuf"
	"github.com/coachd/coachd/server"
	"github.com/coachd/coachd/tools"
)

// refundTool counts its runs: what an approval must gate.
type refundTool struct{ runs *atomic.Int64 }

func (refundTool) Definition() coachd.ToolDef {
	return coachd.ToolDef{Name: "refund", Description: "refund", Category: coachd.ToolInstant,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"amount":{"type":"number"}}}`)}
}

func (r refundTool) Execute(_ context.Context, c coachd.ToolCall, _ coachd.ToolEnv) (coachd.ToolResult, error) {
	r.runs.Add(1)
	return coachd.ToolResult{Content: `{"refunded":true}`}, nil
}

// mustApprovalEnv serves an agent whose refunds over 100 need approval.
func mustApprovalEnv(t *testing.T) (*chatEnv, *atomic.Int64) {
	t.Helper()
	runs := &atomic.Int64{}
	ag := agent.DefaultAgent()
	ag.Approvals = []agent.ApprovalRule{{Tool: "refund", When: []agent.Condition{{Field: "amount", Op: "gt", Value: 100.0}}}}
	return MustChatEnv(t, ag, refundTool{runs}), runs
}

func refundRound(e *chatEnv) {
	e.fake.Enqueue(anthropictest.Blocks(anthropictest.TextBlock("Refunding.", 3),
		anthropictest.ToolUse("toolu_r", "refund", `{"amount":250}`)))
}

// TestChatApproval pauses on a call that needs approval, refuses answers
// that do not fit, runs the call once on approval and refuses a second
// answer.
func TestChatApproval(t *testing.T) {
	e, runs := mustApprovalEnv(t)
	ctx := context.Background()
	refundRound(e)
	s := e.chat(ctx, e.alice.key, "", `{"message":"refund me"}`)
	a := s.data(t, "approval_required")
	if a["tool_use_id"] != "toolu_r" || a["name"] != "refund" || a["input"].(map[string]any)["amount"] != 250.0 ||
		a["reason"] != "refund needs your approval when amount > 100" || s.data(t, "message_end")["stop_reason"] != "awaiting_input" {
		t.Fatalf("stream:\n%s", s.raw)
	}
	if runs.Load() != 0 {
		t.Fatal("the refund ran before approval")
	}
	sid := s.header.Get("X-Coachd-Session-Id")
	answer := func(id, content string) stream {
		return e.chat(ctx, e.alice.key, "", `{"session_id":"`+sid+`","tool_result":{"tool_use_id":"`+id+`","content":`+content+`}}`)
	}
	for _, c := range []struct {
		id, content string
		status      int
		code        string
	}{
		{"toolu_x", `{"approved":true}`, 409, coachd.ECONFLICT},
		{"toolu_r", `"perhaps"`, 400, coachd.EINVALID},
		{"toolu_r", `{"approved":true,"why":"x"}`, 400, coachd.EINVALID},
	} {
		r := answer(c.id, c.content)
		if r.status != c.status || r.errBody.errorCode() != c.code {
			t.Errorf("%s %s: %d %s", c.id, c.content, r.status, r.raw)
		}
	}
	// Another user cannot answer alice's call.
	if r := e.chat(ctx, e.bob.key, "", `{"session_id":"`+sid+`","tool_result":{"tool_use_id":"toolu_r","content":{"approved":true}}}`); r.status != 404 {
		t.Errorf("bob answered: %d %s", r.status, r.raw)
	}
	e.fake.Enqueue(anthropictest.Text("Refunded.", 3))
	ok := answer("toolu_r", `{"approved":true}`)
	if ok.status != 200 || ok.data(t, "message_end")["stop_reason"] != "end_turn" || ok.data(t, "function_result")["tool_use_id"] != "toolu_r" {
		t.Fatalf("approve: %d %s", ok.status, ok.raw)
	}
	if again := answer("toolu_r", `{"approved":true}`); again.status != 409 || again.errBody.errorCode() != coachd.ECONFLICT {
		t.Fatalf("second answer: %d %s", again.status, again.raw)
	}
	if runs.Load() != 1 {
		t.Fatalf("refund ran %d times", runs.Load())
	}
	if got := e.fake.Requests()[1].ToolResults(); len(got) != 1 || got[0].ResultText() != `{"refunded":true}` {
		t.Fatalf("model got %+v", got)
	}
}

// TestChatApprovalNonStreaming: POST /v1/chat names the call waiting for
// approval in its interaction.
func TestChatApprovalNonStreaming(t *testing.T) {
	e, _ := mustApprovalEnv(t)
	refundRound(e)
	r := e.do(request{method: "POST", path: "/v1/chat", key: e.alice.key, body: `{"message":"refund"}`})
	var got struct {
		StopReason  string `json:"stop_reason"`
		Interaction struct {
			ToolUseID string `json:"tool_use_id"`
			Name      string `json:"name"`
			Approval  bool   `json:"approval"`
			Reason    string `json:"reason"`
		} `json:"interaction"`
	}
	mustUnmarshal(t, r.body, &got)
	if r.status != 200 || got.StopReason != "awaiting_input" || !got.Interaction.Approval || got.Interaction.ToolUseID != "toolu_r" || got.Interaction.Reason == "" {
		t.Fatalf("%d %s", r.status, r.body)
	}
}

// TestUIChatApproval: useChat's addToolApprovalResponse (the tool part in
// approval-responded) answers the call; denied, it never runs and the
// stream says tool-output-denied.
func TestUIChatApproval(t *testing.T) {
	e, runs := mustApprovalEnv(t)
	refundRound(e)
	first := `{"id":"chat-a","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"refund"}]}]}`
	s := e.chat(t.Context(), e.alice.key, "?protocol=ai-sdk", first)
	if !strings.Contains(string(s.raw), `{"type":"tool-approval-request","approvalId":"toolu_r","toolCallId":"toolu_r","reason":"refund needs your approval when amount > 100"}`) {
		t.Fatalf("stream:\n%s", s.raw)
	}
	e.fake.Enqueue(anthropictest.Text("No refund then.", 3))
	answer := `{"id":"chat-a","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"refund"}]},` +
		`{"id":"a1","role":"assistant","parts":[{"type":"tool-refund","toolCallId":"toolu_r","state":"approval-responded",` +
		`"input":{"amount":250},"approval":{"id":"toolu_r","approved":false,"reason":"not this month"}}]}]}`
	r := e.chat(t.Context(), e.alice.key, "?protocol=ai-sdk", answer)
	if r.status != 200 || !strings.Contains(string(r.raw), `{"type":"tool-output-denied","toolCallId":"toolu_r"}`) {
		t.Fatalf("resume: %d\n%s", r.status, r.raw)
	}
	if runs.Load() != 0 {
		t.Fatal("a denied refund ran")
	}
	if got := e.fake.Requests()[1].ToolResults(); len(got) != 1 || !got[0].IsError || got[0].ResultText() != "The user denied this call: not this month" {
		t.Fatalf("model got %+v", got)
	}
}

// TestChatApprovalReplicas: one replica pauses the turn, another (its own
// runner and database handle on the same database) takes the approval and
// runs the call; on SQLite and on Postgres.
func TestChatApprovalReplicas(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		runs := &atomic.Int64{}
		ag := agent.DefaultAgent()
		ag.Tools = append(ag.Tools, "refund")
		ag.Approvals = []agent.ApprovalRule{{Tool: "refund"}}
		fake := anthropictest.NewServer()
		t.Cleanup(fake.Close)
		replica := func() (string, *env) {
			db := mustDB(t, dsn, nil)
			ts, err := agent.NewToolset(append(tools.Builtins(), refundTool{runs})...)
			if err != nil {
				t.Fatal(err)
			}
			runner := agent.NewRunner(agent.Config{
				Store: db, Tools: ts,
				Model:  anthropic.New(anthropic.Config{APIKey: "test", BaseURL: fake.URL(), MaxRetries: -1, NoCache: true}),
				Agents: func(string) (*agent.Agent, bool) { return ag, true },
			})
			api := server.New(server.Deps{Store: db, Logger: slog.New(slog.DiscardHandler), AdminKey: adminKey, Runner: runner, Heartbeat: time.Hour})
			srv := httptest.NewServer(api)
			t.Cleanup(func() { closeServer(api, srv) })
			return srv.URL, &env{t: t, db: db, url: srv.URL, logs: &syncbuf.Buffer{}, admin: client.New(srv.URL, adminKey, srv.Client())}
		}
		urlA, envA := replica()
		urlB, _ := replica()
		alice := envA.MustUser("alice")
		a := &chatEnv{env: &env{t: t, url: urlA}, fake: fake}
		b := &chatEnv{env: &env{t: t, url: urlB}, fake: fake}
		fake.Enqueue(anthropictest.Blocks(anthropictest.ToolUse("toolu_r", "refund", `{"amount":5}`)), anthropictest.Text("Refunded.", 2))
		s := a.chat(t.Context(), alice.key, "", `{"message":"refund"}`)
		if s.data(t, "approval_required")["tool_use_id"] != "toolu_r" || runs.Load() != 0 {
			t.Fatalf("pause on A:\n%s", s.raw)
		}
		sid := s.header.Get("X-Coachd-Session-Id")
		r := b.chat(t.Context(), alice.key, "", `{"session_id":"`+sid+`","tool_result":{"tool_use_id":"toolu_r","content":{"approved":true}}}`)
		if r.status != 200 || r.data(t, "message_end")["stop_reason"] != "end_turn" || runs.Load() != 1 {
			t.Fatalf("approve on B: %d runs %d\n%s", r.status, runs.Load(), r.raw)
		}
		if again := a.chat(t.Context(), alice.key, "", `{"session_id":"`+sid+`","tool_result":{"tool_use_id":"toolu_r","content":{"approved":true}}}`); again.status != 409 || runs.Load() != 1 {
			t.Fatalf("second answer on A: %d, %d runs", again.status, runs.Load())
		}
	})
}

// TestOpenAIApproval: the OpenAI-compatible reply shows a call waiting for
// approval as numbered choices, and the next message "1" approves it.
func TestOpenAIApproval(t *testing.T) {
	e, runs := mustApprovalEnv(t)
	refundRound(e)
	r := e.post(e.alice.key, "/v1/chat/completions", oaiBody("refund me"), nil, nil)
	var got struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
	}
	mustUnmarshal(t, r.body, &got)
	if r.status != 200 || len(got.Choices) != 1 || !strings.Contains(got.Choices[0].Message.Content, "refund needs your approval when amount > 100: refund {\"amount\":250}\n1. Approve\n2. Deny") {
		t.Fatalf("%d %s", r.status, r.body)
	}
	sid := r.header.Get("X-Coachd-Session-Id")
	e.fake.Enqueue(anthropictest.Text("Refunded.", 3))
	r = e.post(e.alice.key, "/v1/chat/completions", oaiBody("1"), map[string]string{"X-Coachd-Session-Id": sid}, nil)
	if r.status != 200 || runs.Load() != 1 {
		t.Fatalf("approve: %d, %d runs, %s", r.status, runs.Load(), r.body)
	}
}

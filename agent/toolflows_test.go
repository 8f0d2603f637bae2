package agent_test

// Tools and the flows around them (approvals, contracts, the external
// loop), as a review of 2026-11-28 found them failing.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/tools"
)

// flowHarness serves one agent over the built-ins, echo and three counted
// tools: charge (approval when the agent's rules say so), wire (its own
// definition requires approval) and plain (never needs approval).
type flowHarness struct {
	*harness
	charges, wires, plains atomic.Int64
}

func newFlowHarness(t *testing.T, mod func(a *agent.Agent)) *flowHarness {
	t.Helper()
	rh := &flowHarness{}
	ag := agent.DefaultAgent()
	ag.Tools = append(ag.Tools, "echo", "charge", "wire", "plain", "show_pulse_check")
	if mod != nil {
		mod(ag)
	}
	list := append(tools.Builtins(), echoTool,
		countedTool{name: "charge", runs: &rh.charges},
		countedTool{name: "wire", approval: true, runs: &rh.wires},
		countedTool{name: "plain", runs: &rh.plains})
	rh.harness = harnessOver(t, list, func(string) (*agent.Agent, bool) { return ag, true })
	rh.agent = ag
	return rh
}

func (rh *flowHarness) answer(t *testing.T, sid, id, content string) (*agent.Result, *sink) {
	t.Helper()
	tr, err := rh.runner.Prepare(context.Background(), agent.TurnRequest{User: rh.user, SessionID: sid,
		Answer: &agent.Answer{ToolUseID: id, Content: json.RawMessage(content)}})
	if err != nil {
		t.Fatalf("prepare answer: %v", err)
	}
	s := &sink{}
	return tr.Run(context.Background(), s), s
}

// TestExecuteToolNeedingApproval: POST /v1/tools/execute (ExecuteTool)
// cannot ask the user, so a call that needs approval is refused. It
// answered the approval's placeholder, an empty success, for a call that
// never ran.
func TestExecuteToolNeedingApproval(t *testing.T) {
	rh := newFlowHarness(t, nil)
	out, err := rh.runner.ExecuteTool(context.Background(), agent.ExecRequest{User: rh.user,
		Call: coachd.ToolCall{Name: "wire", Input: json.RawMessage(`{"amount":900}`)}})
	if err != nil {
		return // refusing the call outright is a fine answer
	}
	if rh.wires.Load() == 0 && !out.IsError {
		t.Fatalf("wire did not run (it needs approval) but ExecuteTool answered success: %+v", out)
	}
}

// TestPulseBaselineLostForValidAnswer: show_pulse_check accepts up to 12
// domains of up to 50 characters (its result schema), and every valid
// answer is kept as the baseline, a rating written 3.0 included. Its
// ratings, the file's preview line, could pass the line's 300 characters,
// and the file was then not saved (the error only logged).
func TestPulseBaselineLostForValidAnswer(t *testing.T) {
	rh := newFlowHarness(t, nil)
	rh.fake.Enqueue(anthropictest.Blocks(use("p1", "show_pulse_check", `{"context":"How are things?"}`)))
	res := rh.turn(agent.TurnRequest{Message: "check in"}, &sink{})
	if res.StopReason != coachd.TurnAwaitingInput {
		t.Fatalf("stop %s %v", res.StopReason, res.Err)
	}
	domains := []string{"Career and professional growth", "Physical health and fitness", "Romantic relationship",
		"Friendships and social life", "Family relationships", "Personal finances", "Mental health and mood",
		"Learning and education", "Hobbies and creativity", "Home and environment",
		"Spirituality and purpose", "Community and volunteering"}
	var ratings []map[string]any
	for _, d := range domains {
		ratings = append(ratings, map[string]any{"domain": d, "rating": 3})
	}
	ans, _ := json.Marshal(map[string]any{"ratings": ratings})
	// A rating written 3.0 is an integer to the schema, and to the tool.
	ans = []byte(strings.Replace(string(ans), `"rating":3}`, `"rating":3.0}`, 1))
	if err := rh.runner.Toolset().ValidateResult("show_pulse_check", ans); err != nil {
		t.Fatalf("answer refused by the result schema: %v", err)
	}
	rh.fake.Enqueue(anthropictest.Text("Thanks.", 2))
	res2, _ := rh.answer(t, res.SessionID, "p1", string(ans))
	if res2.StopReason != coachd.TurnEndTurn {
		t.Fatalf("resume: %s %v", res2.StopReason, res2.Err)
	}
	if _, err := rh.store.FindFile(context.Background(), rh.user.ID, tools.PulseBaselineType, tools.PulseBaselineType); err != nil {
		t.Fatalf("the accepted pulse answer was not kept as the baseline: %v", err)
	}
}

// TestApprovalRunsAfterSessionMovedOn: while a call waits for the user's
// approval, the external loop's preflight is refused. It was not, and
// Record stored the app's messages after the paused tool_use, so a later
// {"approved": true} ran the charge the conversation had left behind.
func TestApprovalRunsAfterSessionMovedOn(t *testing.T) {
	ah := newApprovalHarness(t)
	res, _ := ah.pauseCharge(t)
	ctx := context.Background()
	pf, err := ah.runner.Preflight(ctx, agent.PreflightRequest{User: ah.user, SessionID: res.SessionID, Message: "actually, never mind the charge"})
	if err == nil {
		_, err = ah.store.Record(ctx, ah.user.ID, coachd.TurnRecord{SessionID: res.SessionID, ReservationID: pf.ReservationID, Final: true, TokensUsed: 10,
			Messages: []*coachd.Message{
				{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("actually, never mind the charge")}},
				{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("OK, no charge.")}},
			}})
	}
	if err != nil {
		return // refusing the external turn while a call waits is a fine answer
	}
	ah.fake.Enqueue(anthropictest.Text("Charged.", 3))
	tr, err := ah.runner.Prepare(ctx, agent.TurnRequest{User: ah.user, SessionID: res.SessionID,
		Answer: &agent.Answer{ToolUseID: "c1", Content: json.RawMessage(`{"approved":true}`)}})
	if err != nil {
		return // refused: fine
	}
	tr.Run(ctx, &sink{})
	if n := ah.charges.Load(); n != 0 {
		t.Fatalf("the paused charge ran %d time(s) after the session moved on (an external turn was recorded after it)", n)
	}
}

// TestApprovedCallCountsForMustCall: a must_call tool that needs approval
// counts as called once it is approved and runs. The resumed turn forgot
// it (its contract bookkeeping began again after the call), so the model
// was told "charge was not called successfully", and calling it again
// asked for approval again: the contract could never be met.
func TestApprovedCallCountsForMustCall(t *testing.T) {
	rh := newFlowHarness(t, func(a *agent.Agent) {
		a.Contracts = agent.Contracts{MustCall: []string{"charge"}, MaxRepairs: 2}
		a.Approvals = []agent.ApprovalRule{{Tool: "charge"}}
	})
	rh.fake.Enqueue(anthropictest.Blocks(use("c1", "charge", `{"amount":500}`)))
	res := rh.turn(agent.TurnRequest{Message: "charge me 500"}, &sink{})
	if res.StopReason != coachd.TurnAwaitingInput {
		t.Fatalf("first turn: stop %s err %v", res.StopReason, res.Err)
	}
	// After approval the model just confirms; enough replies are queued
	// for the repairs the bug causes.
	for range 4 {
		rh.fake.Enqueue(anthropictest.Text("Charged, done.", 3))
	}
	res2, _ := rh.answer(t, res.SessionID, "c1", `{"approved":true}`)
	if rh.charges.Load() != 1 {
		t.Fatalf("charge ran %d times, want 1", rh.charges.Load())
	}
	if res2.StopReason != coachd.TurnEndTurn {
		t.Fatalf("resumed turn: stop %s, err %v; the approved charge ran but must_call still counts it as not called (model requests: %d)",
			res2.StopReason, res2.Err, len(rh.fake.Requests()))
	}
}

// TestApprovalBypassesOrderedMustCall: an ordered must_call call out of
// order is refused before it may wait for an approval. It paused for the
// approval instead and, once approved, ran before the tool the contract
// orders first.
func TestApprovalBypassesOrderedMustCall(t *testing.T) {
	rh := newFlowHarness(t, func(a *agent.Agent) {
		a.Contracts = agent.Contracts{MustCall: []string{"echo", "wire"}, Ordered: true, MaxRepairs: 2}
	})
	// The model calls wire first: the contract must refuse it.
	rh.fake.Enqueue(anthropictest.Blocks(use("w1", "wire", `{"amount":900}`)))
	rh.fake.Enqueue(anthropictest.Text("ok", 2), anthropictest.Text("ok", 2), anthropictest.Text("ok", 2))
	s := &sink{}
	res := rh.turn(agent.TurnRequest{Message: "wire the money"}, s)
	if res.StopReason == coachd.TurnAwaitingInput {
		// The out-of-order call is waiting for approval instead of being
		// refused; approving it runs it out of order.
		rh.fake.Enqueue(anthropictest.Text("Wired.", 3), anthropictest.Text("Wired.", 3), anthropictest.Text("Wired.", 3))
		rh.answer(t, res.SessionID, "w1", `"approve"`)
		t.Fatalf("wire (ordered after echo) was paused for approval instead of refused as out of order; after approval it ran %d time(s) with echo never called",
			rh.wires.Load())
	}
	if rh.wires.Load() != 0 {
		t.Fatalf("wire ran %d times before echo", rh.wires.Load())
	}
}

// TestPausedTurnsCallsCount: a turn that resumes a paused one goes on
// counting the calls that ran before the pause for its contracts. Here
// echo runs, then charge waits for approval; after the approval the reply
// meets must_call [echo, charge] in order without calling echo again.
func TestPausedTurnsCallsCount(t *testing.T) {
	rh := newFlowHarness(t, func(a *agent.Agent) {
		a.Contracts = agent.Contracts{MustCall: []string{"echo", "charge"}, Ordered: true, MaxRepairs: 1}
		a.Approvals = []agent.ApprovalRule{{Tool: "charge"}}
	})
	rh.fake.Enqueue(anthropictest.Blocks(use("e1", "echo", `{"text":"hi"}`), use("c1", "charge", `{"amount":500}`)))
	res := rh.turn(agent.TurnRequest{Message: "charge me 500"}, &sink{})
	if res.StopReason != coachd.TurnAwaitingInput {
		t.Fatalf("first turn: stop %s err %v", res.StopReason, res.Err)
	}
	rh.fake.Enqueue(anthropictest.Text("Charged, done.", 3), anthropictest.Text("Charged, done.", 3))
	res2, _ := rh.answer(t, res.SessionID, "c1", `{"approved":true}`)
	if res2.StopReason != coachd.TurnEndTurn || rh.charges.Load() != 1 {
		t.Fatalf("resumed turn: stop %s, err %v, charge ran %d times; echo ran before the pause and must still count",
			res2.StopReason, res2.Err, rh.charges.Load())
	}
}

// TestActionTagsBypassMaxToolCalls: action tags count against the turn's
// max_tool_calls like tool calls; the ones past it are not run. A coach
// writing ten [PLAIN: {...}] tags in one reply ran every one of them,
// however low the limit.
func TestActionTagsBypassMaxToolCalls(t *testing.T) {
	rh := newFlowHarness(t, func(a *agent.Agent) {
		a.ActionTags = true
		a.Limits = agent.Limits{MaxToolCalls: 3}
	})
	var b strings.Builder
	b.WriteString("Sure. ")
	for i := range 10 {
		fmt.Fprintf(&b, `[PLAIN: {"note":"n%d"}] `, i)
	}
	rh.fake.Enqueue(anthropictest.Text(b.String(), 10))
	res := rh.turn(agent.TurnRequest{Message: "go"}, &sink{})
	if res.Err != nil {
		t.Logf("stop %s err %v", res.StopReason, res.Err)
	}
	if n := rh.plains.Load(); n > 3 {
		t.Fatalf("max_tool_calls is 3 but action tags ran the tool %d times (stop %s)", n, res.StopReason)
	}
}

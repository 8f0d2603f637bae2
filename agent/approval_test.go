package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/tools"
)

// countedTool counts its executions: what approval must gate.
type countedTool struct {
	name     string
	approval bool // its definition says requires_approval
	runs     *atomic.Int64
}

func (c countedTool) Definition() coachd.ToolDef {
	return coachd.ToolDef{Name: c.name, Description: c.name, Category: coachd.ToolInstant, RequiresApproval: c.approval,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"amount":{"type":"number"},"note":{"type":"string"}}}`)}
}

func (c countedTool) Execute(_ context.Context, call coachd.ToolCall, _ coachd.ToolEnv) (coachd.ToolResult, error) {
	c.runs.Add(1)
	return coachd.ToolResult{Content: "charged " + string(call.Input)}, nil
}

type approvalHarness struct {
	*harness
	charges, deletes, wires atomic.Int64
	tools                   []coachd.Tool
}

// newApprovalHarness serves an agent whose charge calls over 100 need
// approval, whose crm__* (MCP-named) tools always do, and whose wire tool
// is marked requires_approval by its own definition.
func newApprovalHarness(t *testing.T) *approvalHarness {
	t.Helper()
	ah := &approvalHarness{}
	ag := agent.DefaultAgent()
	ag.Tools = append(ag.Tools, "echo", "charge", "crm__delete", "wire")
	ag.Approvals = []agent.ApprovalRule{
		{Tool: "charge", When: []agent.Condition{{Field: "amount", Op: "gt", Value: 100.0}}},
		{Tool: "crm__*"},
	}
	ah.tools = append(tools.Builtins(), echoTool,
		countedTool{name: "charge", runs: &ah.charges},
		countedTool{name: "crm__delete", runs: &ah.deletes},
		countedTool{name: "wire", approval: true, runs: &ah.wires})
	ah.harness = harnessOver(t, ah.tools, func(string) (*agent.Agent, bool) { return ag, true })
	ah.agent = ag
	return ah
}

// replica is another runner on the same database, as another process
// would be; clock, when set, is its clock.
func (ah *approvalHarness) replica(clock coachd.Clock) *agent.Runner {
	return ah.newRunner(ah.tools, func(string) (*agent.Agent, bool) { return ah.agent, true }, func(c *agent.Config) {
		c.Clock = clock
	})
}

// pauseCharge runs a turn whose round holds an echo call and a charge of
// 500, which waits for approval.
func (ah *approvalHarness) pauseCharge(t *testing.T) (*agent.Result, *sink) {
	t.Helper()
	ah.fake.Enqueue(anthropictest.Blocks(
		anthropictest.TextBlock("Charging.", 3),
		use("e1", "echo", `{"k":"v"}`),
		use("c1", "charge", `{"amount":500}`),
	))
	s := &sink{}
	res := ah.turn(agent.TurnRequest{Message: "charge me"}, s)
	if res.StopReason != coachd.TurnAwaitingInput {
		t.Fatalf("stop %s err %v", res.StopReason, res.Err)
	}
	return res, s
}

func (ah *approvalHarness) answer(t *testing.T, r *agent.Runner, sid, id, content string) (*agent.Result, *sink) {
	t.Helper()
	tr, err := r.Prepare(context.Background(), agent.TurnRequest{User: ah.user, SessionID: sid,
		Answer: &agent.Answer{ToolUseID: id, Content: json.RawMessage(content)}})
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	s := &sink{}
	return tr.Run(context.Background(), s), s
}

func TestApproval(t *testing.T) {
	t.Run("PauseThenApproveOnAnotherReplica", func(t *testing.T) {
		ah := newApprovalHarness(t)
		res, s := ah.pauseCharge(t)
		ev := s.of(coachd.EventApprovalRequired)
		if len(ev) != 1 || ev[0].ToolUseID != "c1" || ev[0].ToolName != "charge" || string(ev[0].Input) != `{"amount":500}` ||
			ev[0].Reason != "charge needs your approval when amount > 100" {
			t.Fatalf("approval events %+v", ev)
		}
		if n := len(s.of(coachd.EventInteractionRequested)); n != 0 {
			t.Fatalf("%d interaction events for an approval", n)
		}
		// The round's other call ran; the charge did not.
		if r := s.of(coachd.EventToolResult); len(r) != 1 || r[0].ToolUseID != "e1" {
			t.Fatalf("results before approval %+v", r)
		}
		if n := ah.charges.Load(); n != 0 {
			t.Fatalf("charge ran %d times before approval", n)
		}
		sess, _ := ah.store.FindSession(context.Background(), ah.user.ID, res.SessionID)
		if p := sess.Pending; p == nil || p.Kind != coachd.PendingApproval || p.ToolUseID != "c1" || len(p.Held) != 2 || p.Reason == "" {
			t.Fatalf("pending %+v", sess.Pending)
		}
		ah.fake.Enqueue(anthropictest.Text("Charged.", 4))
		res2, s2 := ah.answer(t, ah.replica(nil), res.SessionID, "c1", `{"approved":true}`)
		if res2.StopReason != coachd.TurnEndTurn {
			t.Fatalf("resume: %s %v", res2.StopReason, res2.Err)
		}
		if n := ah.charges.Load(); n != 1 {
			t.Fatalf("charge ran %d times, want 1", n)
		}
		if r := s2.of(coachd.EventToolResult); len(r) != 1 || r[0].ToolUseID != "c1" || r[0].IsError || r[0].Denied {
			t.Fatalf("resumed results %+v", r)
		}
		got := ah.fake.Requests()[1].ToolResults()
		if len(got) != 2 || got[0].ToolUseID != "e1" || got[1].ToolUseID != "c1" || got[1].ResultText() != `charged {"amount":500}` || got[1].IsError {
			t.Fatalf("sent results %+v", got)
		}
		sess, _ = ah.store.FindSession(context.Background(), ah.user.ID, res.SessionID)
		if sess.Pending != nil {
			t.Fatal("pending not cleared")
		}
		ah.assertValidHistory(res.SessionID)
		// A second answer finds nothing to answer, and nothing runs again.
		_, err := ah.runner.Prepare(context.Background(), agent.TurnRequest{User: ah.user, SessionID: res.SessionID,
			Answer: &agent.Answer{ToolUseID: "c1", Content: json.RawMessage(`{"approved":true}`)}})
		if coachd.ErrorCode(err) != coachd.ECONFLICT || ah.charges.Load() != 1 {
			t.Fatalf("double answer: %v, %d runs", err, ah.charges.Load())
		}
	})
	t.Run("Deny", func(t *testing.T) {
		ah := newApprovalHarness(t)
		res, _ := ah.pauseCharge(t)
		ah.fake.Enqueue(anthropictest.Text("Understood, no charge.", 4))
		res2, s2 := ah.answer(t, ah.runner, res.SessionID, "c1", `{"approved":false,"reason":"too much"}`)
		if res2.StopReason != coachd.TurnEndTurn {
			t.Fatalf("resume: %s %v", res2.StopReason, res2.Err)
		}
		if n := ah.charges.Load(); n != 0 {
			t.Fatalf("a denied charge ran %d times", n)
		}
		r := s2.of(coachd.EventToolResult)
		if len(r) != 1 || !r[0].Denied || !r[0].IsError || r[0].Reason != "too much" {
			t.Fatalf("denial event %+v", r)
		}
		got := ah.fake.Requests()[1].ToolResults()
		if len(got) != 2 || !got[1].IsError || got[1].ResultText() != "The user denied this call: too much" {
			t.Fatalf("sent results %+v", got)
		}
		ah.assertValidHistory(res.SessionID)
	})
	// An error answer (the client could not ask the user) denies the call.
	t.Run("DenyByErrorAnswer", func(t *testing.T) {
		ah := newApprovalHarness(t)
		res, _ := ah.pauseCharge(t)
		ah.fake.Enqueue(anthropictest.Text("OK.", 4))
		tr, err := ah.runner.Prepare(context.Background(), agent.TurnRequest{User: ah.user, SessionID: res.SessionID,
			Answer: &agent.Answer{ToolUseID: "c1", Content: json.RawMessage(`"the dialog did not open"`), IsError: true}})
		if err != nil {
			t.Fatalf("prepare: %v", err)
		}
		if res2 := tr.Run(context.Background(), &sink{}); res2.StopReason != coachd.TurnEndTurn {
			t.Fatalf("resume: %s %v", res2.StopReason, res2.Err)
		}
		got := ah.fake.Requests()[1].ToolResults()
		if ah.charges.Load() != 0 || len(got) != 2 || !got[1].IsError || got[1].ResultText() != "The user denied this call: the app could not ask them: the dialog did not open" {
			t.Fatalf("runs %d, sent %+v", ah.charges.Load(), got)
		}
	})
	t.Run("DenyByOption", func(t *testing.T) {
		ah := newApprovalHarness(t)
		res, _ := ah.pauseCharge(t)
		ah.fake.Enqueue(anthropictest.Text("OK.", 4))
		ah.answer(t, ah.runner, res.SessionID, "c1", `"Deny"`)
		got := ah.fake.Requests()[1].ToolResults()
		if ah.charges.Load() != 0 || len(got) != 2 || got[1].ResultText() != "The user denied this call; it did not run." {
			t.Fatalf("runs %d, sent %+v", ah.charges.Load(), got)
		}
	})
	t.Run("RuleNotMatched", func(t *testing.T) {
		ah := newApprovalHarness(t)
		ah.fake.Enqueue(anthropictest.Blocks(use("c1", "charge", `{"amount":50}`)), anthropictest.Text("Done.", 3))
		s := &sink{}
		res := ah.turn(agent.TurnRequest{Message: "charge 50"}, s)
		if res.StopReason != coachd.TurnEndTurn || ah.charges.Load() != 1 || len(s.of(coachd.EventApprovalRequired)) != 0 {
			t.Fatalf("stop %s, %d runs, events %+v", res.StopReason, ah.charges.Load(), s.of(coachd.EventApprovalRequired))
		}
	})
	t.Run("GlobAndToolFlag", func(t *testing.T) {
		for _, c := range []struct{ tool, reason string }{
			{"crm__delete", "crm__delete needs your approval"},
			{"wire", "wire needs your approval"},
		} {
			ah := newApprovalHarness(t)
			ah.fake.Enqueue(anthropictest.Blocks(use("x1", c.tool, `{}`)))
			s := &sink{}
			res := ah.turn(agent.TurnRequest{Message: "go"}, s)
			ev := s.of(coachd.EventApprovalRequired)
			if res.StopReason != coachd.TurnAwaitingInput || len(ev) != 1 || ev[0].Reason != c.reason {
				t.Fatalf("%s: stop %s events %+v", c.tool, res.StopReason, ev)
			}
			if ah.deletes.Load()+ah.wires.Load() != 0 {
				t.Fatalf("%s ran before approval", c.tool)
			}
		}
	})
	t.Run("MixedRound", func(t *testing.T) {
		// Two calls that need approval in one round: the first waits, the
		// second is answered "not run" so the model can call it again;
		// the calls that need none run.
		ah := newApprovalHarness(t)
		ah.fake.Enqueue(anthropictest.Blocks(
			use("c1", "charge", `{"amount":500}`),
			use("c2", "charge", `{"amount":20}`),
			use("d1", "crm__delete", `{}`),
			use("e1", "echo", `{}`),
		))
		s := &sink{}
		res := ah.turn(agent.TurnRequest{Message: "do it all"}, s)
		if res.StopReason != coachd.TurnAwaitingInput {
			t.Fatalf("stop %s", res.StopReason)
		}
		if ah.charges.Load() != 1 || ah.deletes.Load() != 0 {
			t.Fatalf("charges %d deletes %d before approval", ah.charges.Load(), ah.deletes.Load())
		}
		byID := map[string]coachd.Event{}
		for _, e := range s.of(coachd.EventToolResult) {
			byID[e.ToolUseID] = e
		}
		if _, ok := byID["c1"]; ok || byID["c2"].IsError || !byID["d1"].IsError || !strings.Contains(byID["d1"].Result, "not run") || byID["e1"].IsError {
			t.Fatalf("results %+v", byID)
		}
		ah.fake.Enqueue(anthropictest.Text("Done.", 3))
		ah.answer(t, ah.runner, res.SessionID, "c1", `"approve"`)
		if ah.charges.Load() != 2 {
			t.Fatalf("charges %d after approval", ah.charges.Load())
		}
		got := ah.fake.Requests()[1].ToolResults()
		ids := []string{}
		for _, b := range got {
			ids = append(ids, b.ToolUseID)
		}
		if strings.Join(ids, ",") != "c1,c2,d1,e1" {
			t.Fatalf("sent results in order %v", ids)
		}
		ah.assertValidHistory(res.SessionID)
	})
	t.Run("Expired", func(t *testing.T) {
		ah := newApprovalHarness(t)
		res, _ := ah.pauseCharge(t)
		later := ah.replica(laterClock{agent.DefaultInteractionTTL + time.Minute})
		_, err := later.Prepare(context.Background(), agent.TurnRequest{User: ah.user, SessionID: res.SessionID,
			Answer: &agent.Answer{ToolUseID: "c1", Content: json.RawMessage(`{"approved":true}`)}})
		if coachd.ErrorCode(err) != coachd.ECONFLICT || !strings.Contains(err.Error(), "expired") {
			t.Fatalf("expired answer: %v", err)
		}
		// A message instead denies the call; it never runs.
		ah.fake.Enqueue(anthropictest.Text("Let's talk.", 3))
		tr, err := later.Prepare(context.Background(), agent.TurnRequest{User: ah.user, SessionID: res.SessionID, Message: "never mind"})
		if err != nil {
			t.Fatal(err)
		}
		if r := tr.Run(context.Background(), &sink{}); r.StopReason != coachd.TurnEndTurn {
			t.Fatalf("stop %s %v", r.StopReason, r.Err)
		}
		got := ah.fake.Requests()[1].ToolResults()
		if ah.charges.Load() != 0 || len(got) != 2 || !got[1].IsError || !strings.Contains(got[1].ResultText(), "denied") {
			t.Fatalf("runs %d sent %+v", ah.charges.Load(), got)
		}
		ah.assertValidHistory(res.SessionID)
	})
	t.Run("ErrAnswers", func(t *testing.T) {
		ah := newApprovalHarness(t)
		res, _ := ah.pauseCharge(t)
		for _, c := range []struct {
			id, content string
			code        string
		}{
			{"nope", `{"approved":true}`, coachd.ECONFLICT},
			{"c1", `"maybe"`, coachd.EINVALID},
			{"c1", `{"approved":"yes"}`, coachd.EINVALID},
			{"c1", `{"reason":"no flag"}`, coachd.EINVALID},
			{"c1", `{"approved":true,"extra":1}`, coachd.EINVALID},
			{"c1", `{"approved":false,"reason":"` + strings.Repeat("x", agent.MaxApprovalReason+1) + `"}`, coachd.EINVALID},
		} {
			_, err := ah.runner.Prepare(context.Background(), agent.TurnRequest{User: ah.user, SessionID: res.SessionID,
				Answer: &agent.Answer{ToolUseID: c.id, Content: json.RawMessage(c.content)}})
			if coachd.ErrorCode(err) != c.code {
				t.Errorf("%s %.40s: got %v, want %s", c.id, c.content, err, c.code)
			}
		}
		if n := len(ah.history(res.SessionID)); n != 2 || ah.charges.Load() != 0 {
			t.Fatalf("refused answers stored %d messages, ran %d", n, ah.charges.Load())
		}
	})
}

// laterClock is the system clock moved on by d.
type laterClock struct{ d time.Duration }

func (c laterClock) Now() time.Time { return time.Now().Add(c.d) }

// probeTool reports whether its session still held a pending record while
// it ran.
type probeTool struct{ pendingWhileRunning *atomic.Int64 }

func (probeTool) Definition() coachd.ToolDef {
	return coachd.ToolDef{Name: "probe", Description: "probe", Category: coachd.ToolInstant, RequiresApproval: true,
		InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (p probeTool) Execute(ctx context.Context, _ coachd.ToolCall, env coachd.ToolEnv) (coachd.ToolResult, error) {
	s, err := env.Store.FindSession(ctx, env.User.ID, env.Session.ID)
	if err != nil {
		return coachd.ToolResult{}, err
	}
	if s.Pending != nil {
		p.pendingWhileRunning.Add(1)
	}
	return coachd.ToolResult{Content: "probed"}, nil
}

// TestApprovalAtMostOnce: the pending record is gone from the store
// before an approved call runs, so no second answer (from any replica,
// even after a crash mid-call) can run it again.
func TestApprovalAtMostOnce(t *testing.T) {
	var seen atomic.Int64
	ag := agent.DefaultAgent()
	ag.Tools = append(ag.Tools, "probe")
	h := harnessOver(t, append(tools.Builtins(), probeTool{&seen}), func(string) (*agent.Agent, bool) { return ag, true })
	h.fake.Enqueue(anthropictest.Blocks(use("p1", "probe", `{}`)), anthropictest.Text("ok", 1))
	res := h.turn(agent.TurnRequest{Message: "probe"}, &sink{})
	if res.StopReason != coachd.TurnAwaitingInput {
		t.Fatalf("stop %s", res.StopReason)
	}
	res2 := h.turn(agent.TurnRequest{SessionID: res.SessionID, Answer: &agent.Answer{ToolUseID: "p1", Content: json.RawMessage(`"approve"`)}}, &sink{})
	if res2.StopReason != coachd.TurnEndTurn || seen.Load() != 0 {
		t.Fatalf("stop %s; the record was still pending while the call ran (%d)", res2.StopReason, seen.Load())
	}
	if got := h.fake.Requests()[1].ToolResults(); len(got) != 1 || got[0].ResultText() != "probed" {
		t.Fatalf("sent %+v", got)
	}
	h.assertValidHistory(res.SessionID)
}

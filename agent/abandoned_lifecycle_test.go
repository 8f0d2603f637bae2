package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/tools"
)

// modeTool is a lifecycle tool that, once gate opens, sets the session's
// mode as enter_structured_arc does (env.Session.Mode and a
// session_changed event), whatever its context says: a store write that
// commits after the call's timeout.
type modeTool struct {
	gate, applied chan struct{}
}

func (modeTool) Definition() coachd.ToolDef {
	return coachd.ToolDef{Name: "switch_mode", Description: "switch mode", Category: coachd.ToolLifecycle,
		InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (m modeTool) Execute(_ context.Context, _ coachd.ToolCall, env coachd.ToolEnv) (coachd.ToolResult, error) {
	<-m.gate
	env.Session.Mode = "weekly_checkin"
	env.Emit(coachd.Event{Type: coachd.EventSessionChanged, Change: coachd.ChangeModeEntered, Mode: "weekly_checkin"})
	close(m.applied)
	return coachd.ToolResult{Content: "entered"}, nil
}

// TestAbandonedLifecycleCallKeepsMode: a mode-changing lifecycle call
// that outlives its timeout is answered "did not finish", and the turn
// goes on. When the abandoned call then went on to set the mode, it set
// the turn's own session: the next round's prompt said "Session mode:
// weekly_checkin" and the stream told the client the mode was entered,
// for a call the model was told had not finished.
func TestAbandonedLifecycleCallKeepsMode(t *testing.T) {
	mt := modeTool{gate: make(chan struct{}), applied: make(chan struct{})}
	// wait opens the gate and returns once the abandoned call has set
	// the mode: a round after it sees what the call left.
	wait := testTool{"wait", func(context.Context, coachd.ToolCall) (coachd.ToolResult, error) {
		close(mt.gate)
		<-mt.applied
		return coachd.ToolResult{Content: "waited"}, nil
	}}
	ag := agent.DefaultAgent()
	ag.Tools = append(ag.Tools, "switch_mode", "wait")
	ag.Limits = agent.Limits{ToolTimeout: 50 * time.Millisecond}
	ag.Context = &agent.ContextSpec{} // every section: the session's names its mode
	h := harnessOver(t, append(tools.Builtins(), mt, wait), func(string) (*agent.Agent, bool) { return ag, true })
	h.fake.Enqueue(
		anthropictest.Blocks(use("m1", "switch_mode", `{}`)),
		anthropictest.Blocks(use("w1", "wait", `{}`)),
		anthropictest.Text("Done.", 1),
	)
	s := &sink{}
	res := h.turn(agent.TurnRequest{Message: "start my check-in"}, s)
	if res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("stop %s %v", res.StopReason, res.Err)
	}
	reqs := h.fake.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	if b, _ := json.Marshal(reqs[1].Body["messages"]); !strings.Contains(string(b), "did not finish") {
		t.Fatalf("switch_mode was not abandoned: %s", b)
	}
	if b, _ := json.Marshal(reqs[2].Body["system"]); strings.Contains(string(b), "Session mode: weekly_checkin") {
		t.Errorf("the abandoned call set the turn's mode: %s", b)
	}
	if ev := s.of(coachd.EventSessionChanged); len(ev) > 0 {
		t.Errorf("the abandoned call told the client %+v", ev)
	}
}

package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/tools"
)

// exportTool needs the user's approval and returns a large result.
type exportTool struct{ size int }

func (e exportTool) Definition() coachd.ToolDef {
	return coachd.ToolDef{Name: "export", Description: "export", Category: coachd.ToolInstant, RequiresApproval: true,
		InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (e exportTool) Execute(context.Context, coachd.ToolCall, coachd.ToolEnv) (coachd.ToolResult, error) {
	return coachd.ToolResult{Content: strings.Repeat("Ran 5 km at an easy pace. ", e.size/26)}, nil
}

// TestReserveMaxApprovedResult: the turn that answers an approval runs
// the approved call first, then its first round, which no check precedes
// (roundBudget checks the rounds after it): the hold covers that round as
// the admission priced it, the call's result a placeholder. A call
// returning much more than the hold's room made the round charge past
// the hold. The round now runs only if it fits what is left of it, priced
// as a first round is (at a token a byte, without count_tokens).
func TestReserveMaxApprovedResult(t *testing.T) {
	for _, tc := range []struct {
		name string
		size int // bytes of the approved call's result
		stop string
	}{
		{"ErrNoRoom", 80000, agent.TurnBudget},
		{"OK", 260, coachd.TurnEndTurn},
	} {
		t.Run(tc.name, func(t *testing.T) { testReserveMaxApprovedResult(t, tc.size, tc.stop) })
	}
}

func testReserveMaxApprovedResult(t *testing.T, size int, stop string) {
	ag := agent.DefaultAgent()
	// Two rounds of 2000 output tokens: the hold has room past the first
	// round at its most for a small result, not for a large one.
	ag.MaxTokens = 2000
	ag.Tools = append(ag.Tools, "export")
	h := harnessOver(t, append(tools.Builtins(), exportTool{size: size}), func(string) (*agent.Agent, bool) { return ag, true })
	h.fake.SetScript(func(r *anthropictest.Request) anthropictest.Reply {
		in := usage(int64(len(r.Raw))/4, 5)
		if len(r.ToolResults()) > 0 {
			return anthropictest.Text("Exported.", 1).WithUsage(in)
		}
		return anthropictest.Blocks(use("x1", "export", `{}`)).WithUsage(in)
	})
	res := h.turn(agent.TurnRequest{Message: "Export my log."}, &sink{})
	if res.StopReason != coachd.TurnAwaitingInput {
		t.Fatalf("first turn: stop %s %v", res.StopReason, res.Err)
	}
	ag.Reserve = agent.ReserveMax
	ag.Limits = agent.Limits{MaxRounds: 2}
	calls := len(h.fake.Requests())
	res = h.turn(agent.TurnRequest{SessionID: res.SessionID, Answer: &agent.Answer{ToolUseID: "x1", Content: json.RawMessage(`"approve"`)}}, &sink{})
	r := h.lastReservation()
	n := len(h.fake.Requests()) - calls
	if r.Charged > r.Estimate {
		t.Fatalf("stop %s after %d calls: charged %d of a %d hold", res.StopReason, n, r.Charged, r.Estimate)
	}
	if res.StopReason != stop || (stop == agent.TurnBudget) != (n == 0) {
		t.Fatalf("stop %s (%v) after %d calls, want %s", res.StopReason, res.Err, n, stop)
	}
	// The approved call ran and its result is stored.
	h.assertValidHistory(res.SessionID)
	hist := h.history(res.SessionID)
	found := false
	for _, m := range hist {
		for _, b := range m.Blocks {
			found = found || b.Type == coachd.BlockToolResult && strings.Contains(string(b.Content), "Ran 5 km")
		}
	}
	if !found {
		t.Fatal("the approved call's result is not stored")
	}
}

package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/tools"
)

// TestExecuteToolOrderedContract: POST /v1/tools/execute runs one call of
// an app's own loop, which coachd does not see whole, so an ordered
// must_call cannot be judged there: the second tool of "must_call: [echo,
// list_notes], ordered: true" was refused ("call echo first") on every
// call, echo run just before or not, and the app could never run it.
// must_not_call still holds.
func TestExecuteToolOrderedContract(t *testing.T) {
	a := &agent.Agent{Name: "ordered", Prompt: "p", Tools: []string{"echo", "list_notes", "save_note"},
		Contracts: agent.Contracts{MustCall: []string{"echo", "list_notes"}, Ordered: true, MustNotCall: []string{"save_note"}}}
	h := harnessOver(t, append(tools.Builtins(), echoTool), func(string) (*agent.Agent, bool) { return a, true })
	exec := func(name string) *agent.ExecResult {
		out, err := h.runner.ExecuteTool(context.Background(), agent.ExecRequest{User: h.user,
			Call: coachd.ToolCall{Name: name, Input: json.RawMessage(`{}`)}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return out
	}
	if out := exec("echo"); out.IsError {
		t.Fatalf("echo: %+v", out)
	}
	if out := exec("list_notes"); out.IsError {
		t.Fatalf("list_notes after echo: %+v", out)
	}
	if out := exec("save_note"); !out.IsError || !strings.Contains(out.Result, "contract forbids") {
		t.Fatalf("save_note (must_not_call): %+v", out)
	}
}

package agent_test

import (
	"encoding/json"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/tools"
)

// TestOrderedInteractiveMustCall: an interactive tool listed in an
// ordered must_call ("ask, then save") pauses the turn for the user once
// its predecessors ran, as it does anywhere else. It was run as an
// instant tool instead: the model read "show_options failed: internal
// error", the user was never asked, and the contract could not be met.
func TestOrderedInteractiveMustCall(t *testing.T) {
	a := &agent.Agent{
		Name: "asker", Prompt: "Ask first.", Tools: []string{"echo", "show_options"},
		Contracts: agent.Contracts{MustCall: []string{"echo", "show_options"}, Ordered: true, MaxRepairs: 1},
	}
	h := harnessOver(t, append(tools.Builtins(), echoTool), func(string) (*agent.Agent, bool) { return a, true })
	h.fake.Enqueue(
		anthropictest.Blocks(use("e1", "echo", `{}`)),
		anthropictest.Blocks(use("o1", "show_options", `{"prompt":"Which?","options":["Airport","Downtown"]}`)),
	)
	s := &sink{}
	res := h.turn(agent.TurnRequest{Message: "where should I drive?"}, s)
	if res.StopReason != coachd.TurnAwaitingInput {
		t.Fatalf("stop %s err %v, results %+v", res.StopReason, res.Err, s.of(coachd.EventToolResult))
	}
	if ev := s.of(coachd.EventInteractionRequested); len(ev) != 1 || ev[0].ToolUseID != "o1" {
		t.Fatalf("interaction events %+v", ev)
	}
	h.fake.Enqueue(anthropictest.Text("Airport it is.", 5))
	res2 := h.turn(agent.TurnRequest{SessionID: res.SessionID, Answer: &agent.Answer{ToolUseID: "o1", Content: json.RawMessage(`"Airport"`)}}, &sink{})
	if res2.StopReason != coachd.TurnEndTurn {
		t.Fatalf("resume: %s %v", res2.StopReason, res2.Err)
	}
	h.assertValidHistory(res.SessionID)
}

// TestMustCallErrorAnswer: an interactive must_call tool the client
// answered with is_error (it could not show it) did not run successfully,
// and the contract is not met by it. The answer was counted as a success
// and the turn ended as if the user had been asked.
func TestMustCallErrorAnswer(t *testing.T) {
	a := &agent.Agent{
		Name: "asker", Prompt: "Ask first.", Tools: []string{"show_options"},
		Contracts: agent.Contracts{MustCall: []string{"show_options"}, MaxRepairs: 1},
	}
	h := harnessOver(t, tools.Builtins(), func(string) (*agent.Agent, bool) { return a, true })
	h.fake.Enqueue(anthropictest.Blocks(use("o1", "show_options", `{"prompt":"Which?","options":["Airport","Downtown"]}`)))
	res := h.turn(agent.TurnRequest{Message: "where should I drive?"}, &sink{})
	if res.StopReason != coachd.TurnAwaitingInput {
		t.Fatalf("stop %s err %v", res.StopReason, res.Err)
	}
	h.fake.Enqueue(anthropictest.Text("Go downtown.", 5), anthropictest.Text("Go downtown.", 5))
	res2 := h.turn(agent.TurnRequest{SessionID: res.SessionID, Answer: &agent.Answer{
		ToolUseID: "o1", Content: json.RawMessage(`"this client cannot show options"`), IsError: true}}, &sink{})
	if res2.StopReason != coachd.TurnContractViolation {
		t.Fatalf("resume: stop %s (%v), want contract_violation: show_options never ran successfully", res2.StopReason, res2.Err)
	}
	h.assertValidHistory(res.SessionID)
}

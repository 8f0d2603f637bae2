package agent_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestIntegerWrittenAsFloatReachesTool: save_note's schema says
// importance is an "integer", which JSON Schema counts 50.0 as, and the
// tool decodes it into a Go int, which encoding/json refuses for 50.0. A
// call the schema accepts must run (the tool is handed 50), and the call
// stays as the model wrote it in the history sent back.
func TestIntegerWrittenAsFloatReachesTool(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	in := `{"note_type":"preference","title":"Mornings","content":"Prefers morning shifts","importance":50.0}`
	if err := h.runner.Toolset().ValidateInput("save_note", json.RawMessage(in)); err != nil {
		t.Fatalf("schema refuses %s: %v", in, err)
	}
	h.fake.Enqueue(anthropictest.Blocks(use("n1", "save_note", in)), anthropictest.Text("Saved.", 2))
	s := &sink{}
	h.turn(agent.TurnRequest{Message: "remember I like mornings"}, s)
	r := s.of(coachd.EventToolResult)
	if len(r) != 1 {
		t.Fatalf("results %+v", r)
	}
	if r[0].IsError {
		t.Fatalf("input valid against save_note's schema was refused by the tool: %s", r[0].Result)
	}
	if reqs := h.fake.Requests(); len(reqs) != 2 || !strings.Contains(string(reqs[1].Raw), `"importance":50.0`) {
		t.Errorf("the tool_use sent back is not the call as written (importance 50.0)")
	}
}

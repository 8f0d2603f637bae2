package review

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/coachd/coachd"
)

// TestStoredTraceOverCap: a long review (many test runs, each output
// kept up to its head and tail) outgrows the 1 MiB a review keeps. What
// the coach ran and how each run ended must survive, not be replaced
// whole by {"truncated":true}: they are what shows it verified for itself.
func TestStoredTraceOverCap(t *testing.T) {
	tr := NewTrace("TASK-001")
	tr.event("coach_validate_start", map[string]any{"requirements_count": 1})
	const runs = 40
	for i := range runs {
		run := &CommandRun{Command: "go test -v ./...", ExitCode: i % 2, Output: strings.Repeat("=== RUN   TestX\n", 2*outputKeep/16),
			OutputBytes: 1 << 20, Tests: &TestCounts{Framework: "go", Passed: 3}}
		tr.call(TraceCall{Tool: RunCommandTool, Input: `{"command":"go test -v ./..."}`, OK: true, Command: run})
	}
	tr.event("coach_decision", map[string]any{"decision": "feedback"})
	if whole, _ := json.Marshal(tr); len(whole) <= coachd.ReviewTraceMax {
		t.Fatalf("the trace is %d bytes: not over the cap", len(whole))
	}
	got := storedTrace(tr)
	if errs := (&coachd.Review{TaskID: "TASK-001", Trace: got}).Validate(); len(errs) > 0 {
		t.Fatalf("the stored trace is refused: %v", errs)
	}
	var stored struct {
		Events []struct{ Type string } `json:"events"`
		Calls  []struct {
			Tool    string      `json:"tool"`
			Command *CommandRun `json:"command"`
		} `json:"tool_calls"`
	}
	if err := json.Unmarshal(got, &stored); err != nil {
		t.Fatal(err)
	}
	if len(stored.Events) != 2 || stored.Events[0].Type != "coach_validate_start" || stored.Events[1].Type != "coach_decision" || len(stored.Calls) != runs {
		t.Fatalf("stored %d events, %d calls: %.300s", len(stored.Events), len(stored.Calls), got)
	}
	for i, c := range stored.Calls {
		if c.Command == nil || c.Command.ExitCode != i%2 || c.Command.OutputBytes != 1<<20 || c.Command.Tests == nil || c.Command.Tests.Passed != 3 {
			t.Fatalf("call %d: %+v", i, c.Command)
		}
	}
	if !strings.Contains(string(got), `"outputs_dropped":true`) {
		t.Error("the stored trace does not say its outputs were dropped")
	}
	if whole, _ := json.Marshal(tr); !strings.Contains(string(whole), "=== RUN") || strings.Contains(string(whole), "outputs_dropped") {
		t.Errorf("the trace itself changed: %.200s", whole)
	}
}

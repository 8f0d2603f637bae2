// Package review hosts a validator coach that never trusts a worker's
// self-report: tools confined to a workspace to read the code and run the
// tests with, the seed's validate_implementation and record_decision over
// a per-review trace, the review run and the player/coach build loop.
package review

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"
)

// Trace is what happened in one review: the seed's events
// (coach_validate_start, coach_decision, coach_feedback) and every tool
// call with its duration. record_decision consults it: an approval needs a
// passing test run in this trace. Safe for concurrent use.
type Trace struct {
	mu        sync.Mutex
	taskID    string
	events    []TraceEvent
	calls     []TraceCall
	validated bool
	// requirements are the review's: an approval names every one.
	requirements []string
	// ws is the workspace under review (NewWorkspace sets it) and
	// playerFiles the files_modified of the player's report: an approval
	// needs the packages changed tested (untestedPackages).
	ws          *Workspace
	playerFiles []string
	// reportFiles are the files_modified of the review request's own
	// player report (Prepare): checked whatever the model relays.
	reportFiles []string
	// buildFiles are the paths autobuild saw the player change
	// (Request.Changed), buildUnknown why it could not ("": it could).
	buildFiles   []string
	buildUnknown string
	decision     json.RawMessage
	approved     bool
	// running counts the test runs (testCommand) started and not yet in
	// calls: one the turn left behind at its timeout runs on until it is
	// stopped, and its outcome, timed out, is not known before.
	running int
	now     func() time.Time
}

// TraceEvent is one of the seed's trace events.
type TraceEvent struct {
	Type string          `json:"type"`
	At   time.Time       `json:"at"`
	Data json.RawMessage `json:"data"`
}

// TraceCall is one tool call of the review.
type TraceCall struct {
	Tool       string      `json:"tool"`
	Input      string      `json:"input"` // clipped
	At         time.Time   `json:"at"`
	DurationMS int64       `json:"duration_ms"`
	OK         bool        `json:"ok"`
	Command    *CommandRun `json:"command,omitempty"` // run_command's outcome
}

// NewTrace starts the trace of a review of taskID against requirements
// (none: the ones validate_implementation is given).
func NewTrace(taskID string, requirements ...string) *Trace {
	return &Trace{taskID: taskID, requirements: requirements, now: time.Now}
}

// TaskID is the task under review.
func (t *Trace) TaskID() string { return t.taskID }

func (t *Trace) event(typ string, data any) {
	b, _ := json.Marshal(data)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.events = append(t.events, TraceEvent{Type: typ, At: t.now().UTC(), Data: b})
}

func (t *Trace) call(c TraceCall) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.calls = append(t.calls, c)
}

// lastTestRun is the last run_command whose output had test counts.
func (t *Trace) lastTestRun() *CommandRun {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := len(t.calls) - 1; i >= 0; i-- {
		if r := t.calls[i].Command; r != nil && r.Tests != nil {
			return r
		}
	}
	return nil
}

// testRuns are the run_commands whose output had test counts, in order.
func (t *Trace) testRuns() []*CommandRun {
	t.mu.Lock()
	defer t.mu.Unlock()
	var runs []*CommandRun
	for _, c := range t.calls {
		if c.Command != nil && c.Command.Tests != nil {
			runs = append(runs, c.Command)
		}
	}
	return runs
}

// failedTestRun is the last test run (a run_command whose output had test
// counts, or a test command line: testCommand) that failed (a test
// failed, it exited non-zero or timed out); nil when none did. The code
// does not change within a review: a failure stands whatever passes after
// it. A go test killed before any package's result was printed (one hung
// before its first test), or a pytest or jest killed before its summary,
// has no counts, and failed all the same.
func (t *Trace) failedTestRun() *CommandRun {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := len(t.calls) - 1; i >= 0; i-- {
		r := t.calls[i].Command
		if r == nil || r.Tests == nil && !testCommand(strings.Fields(r.Command)) {
			continue
		}
		if r.ExitCode != 0 || r.TimedOut || r.Tests != nil && r.Tests.Failed > 0 {
			return r
		}
	}
	return nil
}

// changedPaths are the workspace paths the change under review touches,
// and those git tracks and shows changed, and why git's list is not
// known whole (Workspace.changedPaths); nil outside a workspace.
func (t *Trace) changedPaths(ctx context.Context) (paths, tracked []string, unknown string) {
	t.mu.Lock()
	ws, files, seen := t.ws, slices.Concat(t.reportFiles, t.playerFiles), t.buildFiles
	t.mu.Unlock()
	if ws == nil {
		return nil, nil, ""
	}
	return ws.changedPaths(ctx, files, seen)
}

// untestedPackages are the Go packages the change under review touches
// (paths: changedPaths) that no passing go test run of the review
// covered. The seed approves only when all tests pass and the coach ran
// them: the changed code's own tests among them, not another package's.
func (t *Trace) untestedPackages(paths []string) []string {
	t.mu.Lock()
	ws := t.ws
	t.mu.Unlock()
	if ws == nil {
		return nil
	}
	covered := map[string]bool{}
	for _, r := range t.testRuns() {
		if r.Passed() && r.Tests.Framework == "go" {
			for _, p := range r.Packages {
				covered[p] = true
			}
		}
	}
	var missing []string
	for _, p := range ws.changedGoPackages(paths) {
		if !covered[p] {
			missing = append(missing, p)
		}
	}
	return missing
}

// Decision is the decision recorded (nil if none) and whether it approves.
func (t *Trace) Decision() (json.RawMessage, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.decision, t.approved
}

// MarshalJSON stores the trace: task, events, tool calls.
func (t *Trace) MarshalJSON() ([]byte, error) { return t.marshal(true) }

// marshal is MarshalJSON; without outputs, the commands' outputs are left
// out (output_bytes still says how long each was) and outputs_dropped is
// set.
func (t *Trace) marshal(outputs bool) ([]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	events, calls := t.events, t.calls
	if events == nil {
		events = []TraceEvent{}
	}
	if calls == nil {
		calls = []TraceCall{}
	}
	if !outputs {
		calls = slices.Clone(calls)
		for i, c := range calls {
			if c.Command != nil {
				run := *c.Command
				run.Output = ""
				calls[i].Command = &run
			}
		}
	}
	return json.Marshal(struct {
		TaskID  string       `json:"task_id"`
		Events  []TraceEvent `json:"events"`
		Calls   []TraceCall  `json:"tool_calls"`
		Dropped bool         `json:"outputs_dropped,omitempty"`
	}{t.taskID, events, calls, !outputs})
}

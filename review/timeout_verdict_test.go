package review

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/sqlstore"
)

// calledObserver closes gate once the call of tool has returned to the
// turn (here at its timeout: "did not finish").
type calledObserver struct {
	coachd.NopObserver
	tool string
	gate chan struct{}
	once sync.Once
}

func (o *calledObserver) ToolCalled(tool string, _ bool, _ time.Duration) {
	if tool == o.tool {
		o.once.Do(func() { close(o.gate) })
	}
}

type eventLog struct {
	mu  sync.Mutex
	evs []coachd.Event
}

func (l *eventLog) Send(ev coachd.Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.evs = append(l.evs, ev)
	return nil
}

func (l *eventLog) result(id string) (coachd.Event, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ev := range l.evs {
		if ev.Type == coachd.EventToolResult && ev.ToolUseID == id {
			return ev, true
		}
	}
	return coachd.Event{}, false
}

// TestTimedOutRunIsNotAPass: a test run that passed but came back to the
// turn only once its tool timeout had passed is answered "did not
// finish" to the model. Its trace entry said passed, and an approval
// resting on it was recorded: the review approved on a run the model was
// told had not finished. The trace's clock holds the run between its end
// and its return until the turn has left it behind: the window of a run
// that ends exactly at the timeout.
func TestTimedOutRunIsNotAPass(t *testing.T) {
	// A passing test run that ends at once: a script named jest that
	// prints what jest prints (go test's build would outlast the tool
	// timeout, and be killed unfinished).
	dir := t.TempDir()
	jest := filepath.Join(dir, "node_modules", ".bin", "jest")
	write(t, jest, "#!/bin/sh\nprintf ' PASS  src/add.test.js\\n\\nTests:       1 passed, 1 total\\n' >&2\n")
	if err := os.Chmod(jest, 0o755); err != nil {
		t.Fatal(err)
	}
	tr := NewTrace("TASK-001", "Add adds")
	gate := make(chan struct{})
	var calls atomic.Int32
	tr.now = func() time.Time {
		// The first two reads are run_command's start and end (it is the
		// first call): the end waits for the turn to have answered it.
		if calls.Add(1) == 2 {
			<-gate
		}
		return time.Now()
	}
	ws, err := NewWorkspace(dir, Options{Commands: []string{"node_modules/.bin/jest"}, Trace: tr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() }) // the review's bytecode
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, filepath.Join(t.TempDir(), "coachd.db"), coachd.SystemClock{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	ts, err := agent.NewToolset(Unbound()...)
	if err != nil {
		t.Fatal(err)
	}
	ag := agent.DefaultAgent()
	ag.Name, ag.Tools = "coach", []string{RunCommandTool, ValidateTool, DecisionTool}
	ag.Limits = agent.Limits{ToolTimeout: 200 * time.Millisecond}
	fake := anthropictest.NewServer()
	t.Cleanup(fake.Close)
	runner := agent.NewRunner(agent.Config{
		Store: db, Tools: ts, Agents: func(string) (*agent.Agent, bool) { return ag, true },
		Observer: &calledObserver{tool: RunCommandTool, gate: gate},
		Model:    anthropic.New(anthropic.Config{APIKey: "test", BaseURL: fake.URL(), MaxRetries: -1, NoCache: true}),
	})
	u := &coachd.User{Name: "dev", TokenBudget: 10_000_000}
	if err := db.CreateUser(ctx, u, "hash-"+t.Name()); err != nil {
		t.Fatal(err)
	}
	fake.Enqueue(
		anthropictest.Blocks(anthropictest.ToolUse("r1", RunCommandTool, `{"command":"node_modules/.bin/jest"}`)),
		anthropictest.Blocks(anthropictest.ToolUse("v1", ValidateTool, validateInput)),
		anthropictest.Blocks(anthropictest.ToolUse("d1", DecisionTool, approveInput)),
		anthropictest.Text("Done.", 1),
	)
	turn, err := runner.Prepare(ctx, agent.TurnRequest{User: u, Agent: ag.Name, Message: "review", Trusted: true,
		Bound: append(ws.Tools(), DecisionTools(tr)...)})
	if err != nil {
		t.Fatal(err)
	}
	log := &eventLog{}
	if res := turn.Run(ctx, log); res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("stop %s %v", res.StopReason, res.Err)
	}
	told, _ := log.result("r1")
	if !strings.Contains(told.Result, "did not finish") {
		t.Fatalf("run_command's result %q, want it left behind at its timeout", told.Result)
	}
	if decided, _ := log.result("d1"); !decided.IsError || !strings.Contains(decided.Result, "did not finish") {
		t.Errorf("approval recorded on a run the model was told did not finish: %s", decided.Result)
	}
	if d, approved := tr.Decision(); approved {
		t.Errorf("review approved: %s", d)
	}
	if run := tr.lastTestRun(); run != nil && run.Passed() {
		t.Errorf("the trace says the run passed (%+v); the model was told %q", run, told.Result)
	}
}

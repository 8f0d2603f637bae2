package agent_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/tools"
)

// lateNote stages a note, as save_note does, once gate opens: after the
// turn left its call behind at the timeout.
type lateNote struct{ gate, staged chan struct{} }

func (lateNote) Definition() coachd.ToolDef {
	return coachd.ToolDef{Name: "late_note", Description: "late note", Category: coachd.ToolInstant,
		InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (l lateNote) Execute(_ context.Context, _ coachd.ToolCall, env coachd.ToolEnv) (coachd.ToolResult, error) {
	<-l.gate
	defer close(l.staged)
	if env.StageNote == nil {
		return coachd.ToolResult{Content: "no staging"}, nil
	}
	if err := env.StageNote(&coachd.Note{UserID: env.User.ID, SessionID: env.Session.ID, Title: "late", Content: "written after the timeout", Type: "insight", Importance: coachd.DefaultImportance}); err != nil {
		return coachd.ToolResult{Content: err.Error(), IsError: true}, nil
	}
	return coachd.ToolResult{Content: "saved"}, nil
}

// lifecycleTool is a lifecycle test tool: it runs after the round's
// earlier calls returned.
type lifecycleTool struct{ testTool }

func (l lifecycleTool) Definition() coachd.ToolDef {
	d := l.testTool.Definition()
	d.Category = coachd.ToolLifecycle
	return d
}

// returnedObserver opens gate once the call named name has returned to
// the turn (at its timeout: "did not finish").
type returnedObserver struct {
	coachd.NopObserver
	name string
	gate chan struct{}
	once sync.Once
}

func (o *returnedObserver) ToolCalled(tool string, _ bool, _ time.Duration) {
	if tool == o.name {
		o.once.Do(func() { close(o.gate) })
	}
}

// TestAbandonedCallStagesNoNote: a call left behind at its timeout is
// answered "did not finish", but it could still stage a note into its
// round until the round was stored (a later call of the round still
// running): the note was stored with the round, for a call the model was
// told had not finished.
func TestAbandonedCallStagesNoNote(t *testing.T) {
	ln := lateNote{gate: make(chan struct{}), staged: make(chan struct{})}
	// hold runs after late_note returned (a lifecycle call waits for the
	// round's earlier calls) and until late_note has tried to stage.
	hold := lifecycleTool{testTool{"hold", func(context.Context, coachd.ToolCall) (coachd.ToolResult, error) {
		<-ln.staged
		return coachd.ToolResult{Content: "held"}, nil
	}}}
	ag := agent.DefaultAgent()
	ag.Tools = append(ag.Tools, "late_note", "hold")
	ag.Limits = agent.Limits{ToolTimeout: 300 * time.Millisecond}
	h := harnessOver(t, append(tools.Builtins(), ln, hold), func(string) (*agent.Agent, bool) { return ag, true })
	h.runner = h.newRunner(append(tools.Builtins(), ln, hold), func(string) (*agent.Agent, bool) { return ag, true },
		func(c *agent.Config) { c.Observer = &returnedObserver{name: "late_note", gate: ln.gate} })
	h.fake.Enqueue(
		anthropictest.Blocks(use("n1", "late_note", `{}`), use("h1", "hold", `{}`)),
		anthropictest.Text("Done.", 1),
	)
	s := &sink{}
	if res := h.turn(agent.TurnRequest{Message: "remember this"}, s); res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("stop %s %v", res.StopReason, res.Err)
	}
	var told string
	for _, ev := range s.of(coachd.EventToolResult) {
		if ev.ToolUseID == "n1" {
			told = ev.Result
		}
	}
	if told != "late_note did not finish within 300ms" {
		t.Fatalf("late_note's result %q, want it left behind", told)
	}
	notes, _, err := h.store.ListNotes(context.Background(), h.user.ID, coachd.NoteFilter{}, coachd.Page{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 0 {
		t.Errorf("the abandoned call's note was stored: %q", notes[0].Content)
	}
}

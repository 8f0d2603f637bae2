package review

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/coachd/coachd"
)

// TestApprovalWhileATestRunIsRunning: a test run the turn left behind at
// its tool timeout is answered "did not finish" and goes on until it is
// stopped; only then is it in the trace, as timed out. An approval made
// meanwhile (the model's next rounds are quicker than the stop) saw the
// earlier passing run alone and was recorded, with one of the review's
// test runs unfinished.
func TestApprovalWhileATestRunIsRunning(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "started.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// A script that prints what jest prints, and with --hang tells it
	// started (the FIFO) and hangs in a test.
	jest := filepath.Join(dir, "node_modules", ".bin", "jest")
	write(t, jest, "#!/bin/sh\nif [ \"$1\" = --hang ]; then\n  echo started > started.fifo\n  exec sleep 3600\nfi\n"+
		"printf ' PASS  src/add.test.js\\n\\nTests:       1 passed, 1 total\\n' >&2\n")
	if err := os.Chmod(jest, 0o755); err != nil {
		t.Fatal(err)
	}
	tools, tr := reviewTools(t, dir, "node_modules/.bin/jest", "node_modules/.bin/jest --hang")
	if res := call(t, tools, ValidateTool, validateInput); res.IsError {
		t.Fatalf("validate: %+v", res)
	}
	if res := call(t, tools, RunCommandTool, `{"command":"node_modules/.bin/jest"}`); !strings.Contains(res.Content, `"passed":1`) {
		t.Fatalf("run: %s", res.Content)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan coachd.ToolResult, 1)
	go func() {
		// Left behind by the turn: the trace says it did not finish.
		env := coachd.ToolEnv{Finish: func() bool { return false }}
		res, _ := tools[RunCommandTool].Execute(ctx, coachd.ToolCall{ID: "toolu_h", Name: RunCommandTool,
			Input: json.RawMessage(`{"command":"node_modules/.bin/jest --hang"}`)}, env)
		if w, err := os.OpenFile(fifo, os.O_RDWR, 0); err == nil { // a reader still waiting: unblocked
			w.Close()
		}
		done <- res
	}()
	r, err := os.Open(fifo) // until the hanging run has started
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(r)
	r.Close()
	res := call(t, tools, DecisionTool, approveInput)
	cancel()
	<-done
	if !res.IsError || !strings.Contains(res.Content, "has not ended") {
		t.Fatalf("approval while a test run of the review is running: %s", res.Content)
	}
	if d, _ := tr.Decision(); d != nil {
		t.Fatalf("recorded: %s", d)
	}
	// Stopped, it is a failed run: still refused.
	wantRefused(t, tools, "approval after the run was stopped")
}

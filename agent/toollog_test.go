package agent_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/tools"
)

// lockedBuffer is a log destination the parallel tools of a round may
// write to at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Split(strings.TrimSpace(l.b.String()), "\n")
}

// TestToolLogLines: a tool that panics or fails with an internal error
// writes one line naming the session, the tool and the call; a tool that
// succeeds, or fails with the caller's error, writes none. (The call's
// logger is built only when a line is written.)
func TestToolLogLines(t *testing.T) {
	crash := testTool{"crash", func(context.Context, coachd.ToolCall) (coachd.ToolResult, error) {
		return coachd.ToolResult{}, coachd.Errorf(coachd.EINTERNAL, "disk on fire")
	}}
	ag := agent.DefaultAgent()
	ag.Tools = append(ag.Tools, "echo", "fail", "boom", "crash")
	h := harnessOver(t, append(tools.Builtins(), echoTool, failTool, boomTool, crash),
		func(string) (*agent.Agent, bool) { return ag, true })
	var logs lockedBuffer
	h.runner = h.newRunner(append(tools.Builtins(), echoTool, failTool, boomTool, crash),
		func(string) (*agent.Agent, bool) { return ag, true },
		func(c *agent.Config) { c.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
	h.fake.Enqueue(
		anthropictest.Blocks(use("t1", "echo", `{}`), use("t2", "fail", `{}`), use("t3", "boom", `{}`), use("t4", "crash", `{}`)),
		anthropictest.Text("Done.", 2),
	)
	res := h.turn(agent.TurnRequest{Message: "go"}, &sink{})
	if res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("stop %s err %v", res.StopReason, res.Err)
	}
	want := map[string]string{
		"t3": `msg="tool panicked" session=` + res.SessionID + ` tool=boom tool_use_id=t3 panic=kaboom`,
		"t4": `msg="tool failed" session=` + res.SessionID + ` tool=crash tool_use_id=t4 err=`,
	}
	for _, line := range logs.lines() {
		for id, w := range want {
			if strings.Contains(line, "tool_use_id="+id) {
				if !strings.Contains(line, w) {
					t.Errorf("line of %s:\n%s\nwant it to hold\n%s", id, line, w)
				}
				delete(want, id)
			}
		}
		for _, quiet := range []string{"t1", "t2"} {
			if strings.Contains(line, "tool_use_id="+quiet) {
				t.Errorf("call %s logged: %s", quiet, line)
			}
		}
	}
	for id := range want {
		t.Errorf("no line for %s in\n%s", id, strings.Join(logs.lines(), "\n"))
	}
}

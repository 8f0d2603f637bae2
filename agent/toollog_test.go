package agent_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/tools"
)

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
	toolList := append(tools.Builtins(), echoTool, failTool, boomTool, crash)
	agents := func(string) (*agent.Agent, bool) { return ag, true }
	h := harnessOver(t, toolList, agents)
	// slog's handlers serialize their writes (the tools of a round log
	// from goroutines of their own), and each line is written before its
	// call's result reaches the turn, so the buffer is read after the
	// turn without a lock.
	var logs bytes.Buffer
	h.runner = h.newRunner(toolList, agents, func(c *agent.Config) { c.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
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
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	for _, line := range lines {
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
		t.Errorf("no line for %s in\n%s", id, logs.String())
	}
}

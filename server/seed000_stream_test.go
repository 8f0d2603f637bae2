package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// aspEvents are the data lines of an ASP stream as seed 000's reader
// parses them (each `data:` line one event).
func aspEvents(t *testing.T, raw []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(string(raw), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("data line %q: %v", data, err)
		}
		out = append(out, ev)
	}
	return out
}

// TestSeed000StreamToolLimit: seed 000's reducer shows "Running NAME..."
// from a tool event until its tool_result (seed 000 lines 760-765); its
// own loop answers every tool it announced (lines 632-648). A round
// that goes past the turn's tool-call limit is stored with a "not run"
// result for each of its calls; the stream says so too, so the
// client's tool status ends with the turn.
func TestSeed000StreamToolLimit(t *testing.T) {
	ag := agent.DefaultAgent()
	ag.Limits.MaxToolCalls = 2
	e := MustChatEnv(t, ag)
	e.fake.Enqueue(anthropictest.Blocks(anthropictest.TextBlock("Checking.", 3),
		anthropictest.ToolUse("toolu_a", "list_notes", `{}`),
		anthropictest.ToolUse("toolu_b", "list_notes", `{}`),
		anthropictest.ToolUse("toolu_c", "list_notes", `{}`)))
	s := e.chat(context.Background(), e.alice.key, "?protocol=asp", `{"message":"how do I rank up?"}`)
	evs := aspEvents(t, s.raw)
	open := map[any]bool{}
	var toolStatus string // the seed's reducer
	for _, ev := range evs {
		switch ev["type"] {
		case "tool":
			open[ev["tool_use_id"]] = true
			toolStatus = "Running " + ev["name"].(string) + "..."
		case "tool_result":
			if ev["is_error"] != true || !strings.Contains(ev["content"].(string), "limit of 2") {
				t.Errorf("tool_result %v, want the stored not-run result", ev)
			}
			delete(open, ev["tool_use_id"])
			toolStatus = ""
		}
	}
	if len(open) > 0 || toolStatus != "" {
		t.Fatalf("calls %v never answered (the client still shows %q):\n%s", open, toolStatus, s.raw)
	}
	if last := evs[len(evs)-1]; last["type"] != "message_stop" || last["stop_reason"] != "tool_limit" {
		t.Fatalf("last event %v", last)
	}
}

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

// TestSeed000StreamReplayID: seed 000's page posts "{ message,
// session_id, replay_id }" to its chat route (line 555), the route coachd
// serves with ?protocol=asp. The replay the player is looking at reaches
// the model with the turn's context, as the rlcoach pack's prompt says
// it does.
func TestSeed000StreamReplayID(t *testing.T) {
	e := MustChatEnv(t, nil)
	e.fake.Enqueue(anthropictest.Text("That replay shows slow rotations.", 8))
	s := e.chat(context.Background(), e.alice.key, "?protocol=asp", `{"message":"what went wrong here?","replay_id":"replay-42"}`)
	evs := aspEvents(t, s.raw)
	if s.status != 200 || len(evs) == 0 || evs[0]["type"] != "ack" || evs[len(evs)-1]["stop_reason"] != "end_turn" {
		t.Fatalf("seed 000's body with replay_id: %d\n%s", s.status, s.raw)
	}
	reqs := e.fake.Requests()
	if got := string(reqs[len(reqs)-1].Raw); !strings.Contains(got, "replay-42") {
		t.Fatalf("the model was not told the replay: %s", got)
	}
	// The player's words stay theirs in the session's messages.
	msgs, err := e.db.History(context.Background(), e.alice.ID, s.header.Get("X-Coachd-Session-Id"))
	if err != nil || len(msgs) != 2 || msgs[0].Content != "what went wrong here?" || len(msgs[0].Blocks) != 1 {
		t.Fatalf("stored %s %v", mustJSON(t, msgs), err)
	}
}

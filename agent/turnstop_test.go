package agent_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// turnStop is the stored metadata.turn_stop_reason of m.
func turnStop(t *testing.T, m *coachd.Message) string {
	t.Helper()
	var meta struct {
		TurnStopReason string `json:"turn_stop_reason"`
	}
	if len(m.Metadata) > 0 {
		if err := json.Unmarshal(m.Metadata, &meta); err != nil {
			t.Fatal(err)
		}
	}
	return meta.TurnStopReason
}

// TestTurnStopStored: a turn that stops early for a reason of its own (a
// limit, the session full) stores that reason on its last reply, as
// turn_ended said it: the model's stop reason there (tool_use, end_turn)
// did not say it, and a reloaded conversation lost why it stopped.
func TestTurnStopStored(t *testing.T) {
	t.Run("MaxRounds", func(t *testing.T) {
		h := newHarness(t, agent.Limits{MaxRounds: 1})
		h.fake.Enqueue(anthropictest.Blocks(anthropictest.TextBlock("Checking.", 2), use("e1", "echo", `{}`)))
		res := h.turn(agent.TurnRequest{Message: "go"}, &sink{})
		if res.StopReason != coachd.TurnMaxRounds {
			t.Fatalf("stop %q, want max_rounds", res.StopReason)
		}
		msgs := h.history(res.SessionID)
		var got []string
		for _, m := range msgs {
			if m.Role == coachd.RoleAssistant {
				got = append(got, turnStop(t, m))
			}
		}
		if strings.Join(got, ",") != coachd.TurnMaxRounds {
			t.Errorf("assistant messages' turn_stop_reason = %q, want [max_rounds]", got)
		}
	})
	t.Run("SessionFull", func(t *testing.T) {
		h := newHarness(t, agent.Limits{})
		first := nearFull(t, h, coachd.MaxMessagesPerSession-3)
		h.fake.Enqueue(anthropictest.Text("Here is what I found.", 5))
		res := h.turn(agent.TurnRequest{SessionID: first.SessionID, Message: "go"}, &sink{})
		if res.StopReason != coachd.TurnSessionFull {
			t.Fatalf("stop %q, err %v; want session_full", res.StopReason, res.Err)
		}
		msgs := h.history(first.SessionID)
		if last := msgs[len(msgs)-1]; turnStop(t, last) != coachd.TurnSessionFull || turnStop(t, msgs[1]) != "" {
			t.Errorf("last reply's turn_stop_reason = %q (first turn's %q), want session_full on the last only", turnStop(t, last), turnStop(t, msgs[1]))
		}
	})
	t.Run("EndTurn", func(t *testing.T) {
		h := newHarness(t, agent.Limits{})
		h.fake.Enqueue(anthropictest.Text("Hello.", 2))
		res := h.turn(agent.TurnRequest{Message: "hi"}, &sink{})
		msgs := h.history(res.SessionID)
		if got := turnStop(t, msgs[len(msgs)-1]); got != "" {
			t.Errorf("a finished turn's reply has turn_stop_reason %q, want none", got)
		}
	})
}

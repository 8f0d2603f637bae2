package agent_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestArcSkillLoadsInTurn: a skill whose rule is the session's mode
// (sage's weekly-checkin: mode weekly_checkin) is in the prompt of the
// rounds after enter_structured_arc entered that mode, in the same turn,
// and the session context names the new mode. The prompt was assembled
// once at the turn's start: the check-in the model had just entered ran
// without its skill, under "default" mode, until the user's next message.
// Leaving the arc (complete_session {type: arc}) takes it out again.
func TestArcSkillLoadsInTurn(t *testing.T) {
	h := newPackHarness(t, loadSage(t), nil)
	h.fake.Enqueue(
		anthropictest.Blocks(use("a1", "enter_structured_arc", `{"arc":"weekly_checkin"}`)),
		anthropictest.Blocks(use("c1", "complete_session", `{"type":"arc","summary":"Checked in."}`)),
		anthropictest.Text("Let's begin your weekly check-in.", 5),
	)
	res := h.turn(agent.TurnRequest{Message: "let's do my weekly check-in"}, &sink{})
	if res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("stop %s %v", res.StopReason, res.Err)
	}
	reqs := h.fake.Requests()
	system := func(i int) string {
		b, _ := json.Marshal(reqs[i].Body["system"])
		return string(b)
	}
	const skill = `\u003cskill name=\"weekly-checkin\"\u003e`
	if strings.Contains(system(0), skill) {
		t.Fatalf("weekly-checkin active before the arc was entered: %s", system(0))
	}
	if s := system(1); !strings.Contains(s, skill) || !strings.Contains(s, "Session mode: weekly_checkin") {
		t.Fatalf("the round after enter_structured_arc has no weekly-checkin skill or mode: %s", s)
	}
	if s := system(2); strings.Contains(s, skill) || strings.Contains(s, "Session mode: weekly_checkin") {
		t.Fatalf("the round after the arc was completed still has it: %s", s)
	}
}

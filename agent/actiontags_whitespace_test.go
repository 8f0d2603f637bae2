package agent_test

import (
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestActionTagsOnlyLeaveNoBlankText: seed 001's coach writes each action
// tag "on its own line"; a reply that is only tags leaves newlines once
// they are taken out. The Messages API refuses a text block with nothing
// but whitespace ("text content blocks must contain non-whitespace
// text"), so such a block must never be sent back: not in the turn's next
// round, not in the session's next turn.
func TestActionTagsOnlyLeaveNoBlankText(t *testing.T) {
	a := &agent.Agent{Name: "driver", Prompt: "Coach drivers.", Tools: []string{"save_note", "list_notes"}, ActionTags: true}
	h := newPackHarness(t, loadSage(t), func(string) (*agent.Agent, bool) { return a, true })
	tag := `[SAVE_NOTE: {"note_type": "preference", "title": "Mornings", "content": "Likes 5-10am"}]`
	// A tool round whose text is a tag on its own line, then a reply that
	// is tags alone.
	h.fake.Enqueue(
		anthropictest.Blocks(anthropictest.TextBlock(tag+"\n", 7), anthropictest.ToolUse("", "list_notes", `{}`)),
		anthropictest.Text("Noted.", 3),
	)
	res := h.turn(agent.TurnRequest{Message: "I like mornings"}, &sink{})
	if res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("stop %s %v", res.StopReason, res.Err)
	}
	h.fake.Enqueue(anthropictest.Text("\n"+tag+"\n"+tag+"\n", 5), anthropictest.Text("Sure.", 3))
	res = h.turn(agent.TurnRequest{SessionID: res.SessionID, Message: "and evenings"}, &sink{})
	if res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("stop %s %v", res.StopReason, res.Err)
	}
	h.turn(agent.TurnRequest{SessionID: res.SessionID, Message: "thanks"}, &sink{})
	reqs := h.fake.Requests()
	if len(reqs) < 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, r := range reqs {
		for j, m := range r.Messages() {
			for k, b := range m.Blocks {
				if b.Type == coachd.BlockText && strings.TrimSpace(b.Text) == "" {
					t.Errorf("request %d: messages.%d.content.%d is a %s text block of whitespace only (%q): the API refuses it", i, j, k, m.Role, b.Text)
				}
			}
		}
	}
}

package agent_test

import (
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestActionTagsEndWithTheirTextBlock: tags are found block by block in
// what is stored and run (stripTags), so the streamed text must be
// filtered the same way. A candidate still open when a tool call starts
// ended with its text block: it is text, shown before the tool call
// (where the stored reply has it), and not joined to text after the call
// into a tag that hides text from the driver, runs nothing, and stays in
// the stored reply.
func TestActionTagsEndWithTheirTextBlock(t *testing.T) {
	a := &agent.Agent{Name: "driver", Prompt: "Coach drivers.", Tools: []string{"save_note", "list_notes"}, ActionTags: true}
	h := newPackHarness(t, loadSage(t), func(string) (*agent.Agent, bool) { return a, true })
	h.fake.Enqueue(
		anthropictest.Blocks(
			anthropictest.TextBlock(`Checking [SAVE_NOTE: {"title":`, 4),
			anthropictest.ToolUse("", "list_notes", `{}`),
			anthropictest.TextBlock(` "x"}] then more.`, 4),
		),
		anthropictest.Text("Done.", 3),
	)
	s := &sink{}
	res := h.turn(agent.TurnRequest{Message: "what do you know about me"}, s)
	if res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("stop %s %v", res.StopReason, res.Err)
	}
	var seen strings.Builder
	var beforeCall string
	called := false
	s.mu.Lock()
	for _, e := range s.events {
		switch e.Type {
		case coachd.EventTextDelta:
			seen.WriteString(e.Text)
		case coachd.EventToolCallStarted:
			if !called {
				beforeCall, called = seen.String(), true
			}
		}
	}
	s.mu.Unlock()
	if beforeCall != `Checking [SAVE_NOTE: {"title":` {
		t.Errorf("text before the tool call: %q", beforeCall)
	}
	if want := `Checking [SAVE_NOTE: {"title": "x"}] then more.Done.`; seen.String() != want || res.Text != want {
		t.Errorf("client saw %q, stored %q, want %q", seen.String(), res.Text, want)
	}
	if r := s.of(coachd.EventToolResult); len(r) != 1 {
		t.Errorf("%d results, want list_notes's only", len(r))
	}
}

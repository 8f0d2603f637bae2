package agent_test

import (
	"context"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// A tool round its turn's followers gave up before it was stored creates
// none of the notes its save_note calls staged: its client was told the
// turn was interrupted, history holds none of the round, and a note
// created all the same was a side effect of a call nobody sees, made
// again by the retry.
func TestGivenUpRoundCreatesNoNote(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	ctx := context.Background()
	h.fake.Enqueue(anthropictest.Blocks(anthropictest.ToolUse("toolu_1", "save_note",
		`{"note_type":"insight","title":"Goal","content":"Run 5 km"}`)))
	h.fake.Enqueue(anthropictest.Text("Noted.", 4))
	tr, err := h.runner.Prepare(ctx, agent.TurnRequest{User: h.user, Message: "remember my goal",
		Stream: &coachd.StreamStart{Owner: "proc_test"}})
	if err != nil {
		t.Fatal(err)
	}
	s := &giveUpSink{h: h, at: coachd.EventToolResult, turn: func() (string, int64) { return tr.SessionID(), tr.StreamTurn() }}
	res := tr.Run(ctx, s)
	if s.err != nil {
		t.Fatalf("the give-up: %v", s.err)
	}
	if res.Err == nil || res.Err.Code != "turn_interrupted" {
		t.Fatalf("the turn ended %q (%v), want interrupted", res.StopReason, res.Err)
	}
	notes, _, err := h.store.ListNotes(ctx, h.user.ID, coachd.NoteFilter{}, coachd.Page{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range notes {
		t.Errorf("note %q created by a round its followers were told was interrupted", n.Title)
	}
	if msgs := h.history(res.SessionID); len(msgs) != 1 {
		t.Errorf("history holds %d messages, want the question alone", len(msgs))
	}
}

package agent_test

import (
	"context"
	"testing"

	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// BenchmarkRunToolTurn is a whole tool-round turn against an unpaced fake
// (save_note, then a text reply), as BenchmarkRunTurn: Prepare, the user
// message, the note, the round and its charge, the reply, settlement and
// release; a new session every 10 turns.
//
//	go test ./agent -run '^$' -bench 'RunToolTurn' -benchtime 300x -count 6
func BenchmarkRunToolTurn(b *testing.B) {
	h, sid := benchSession(b)
	ctx := context.Background()
	n := 0
	for b.Loop() {
		if n++; n%10 == 0 {
			sid = ""
		}
		h.fake.Enqueue(
			anthropictest.Blocks(use("toolu_n", "save_note", `{"note_type":"preference","title":"Mornings","content":"Drives early","importance":3}`)),
			anthropictest.Text("Noted, and here is a reply.", 3),
		)
		tr, err := h.runner.Prepare(ctx, agent.TurnRequest{User: h.user, SessionID: sid, Message: "save it"})
		if err != nil {
			b.Fatal(err)
		}
		res := tr.Run(ctx, &sink{})
		if res.Err != nil || len(res.ToolCalls) != 1 {
			b.Fatalf("%s: %v", res.StopReason, res.Err)
		}
		sid = res.SessionID
	}
}

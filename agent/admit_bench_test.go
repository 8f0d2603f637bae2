package agent_test

import (
	"context"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/tools"
)

// benchSession is a harness over a real SQLite file with one session that
// has had a turn, so the runner knows its history (the steady state).
func benchSession(b *testing.B) (*harness, string) {
	ag := agent.DefaultAgent()
	h := harnessOver(b, tools.Builtins(), func(string) (*agent.Agent, bool) { return ag, true })
	budget := int64(1) << 40
	if _, err := h.store.UpdateUser(context.Background(), h.user.ID, coachd.UserUpdate{TokenBudget: &budget}); err != nil {
		b.Fatal(err)
	}
	h.fake.SetScript(func(*anthropictest.Request) anthropictest.Reply { return anthropictest.Text("fine, thanks", 3) })
	tr, err := h.runner.Prepare(context.Background(), agent.TurnRequest{User: h.user, Message: "hello"})
	if err != nil {
		b.Fatal(err)
	}
	res := tr.Run(context.Background(), &sink{})
	return h, res.SessionID
}

// BenchmarkPrepare is the work of a turn before its first model call on a
// session the runner has seen: find the session, take its turn, read the
// new messages, price and reserve (Close, untimed, gives it up again).
//
//	go test ./agent -run '^$' -bench 'Prepare|RunTurn' -benchtime 300x -count 5
func BenchmarkPrepare(b *testing.B) {
	h, sid := benchSession(b)
	ctx := context.Background()
	for b.Loop() {
		tr, err := h.runner.Prepare(ctx, agent.TurnRequest{User: h.user, SessionID: sid, Message: "and now?"})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		tr.Close()
		b.StartTimer()
	}
}

// BenchmarkRunTurn is a whole plain turn against an unpaced fake:
// Prepare, the user message, the model call, the reply, settlement and
// release; a new session every 10 turns (as BenchmarkLoad), so the
// history stays short.
func BenchmarkRunTurn(b *testing.B) {
	h, sid := benchSession(b)
	ctx := context.Background()
	n := 0
	for b.Loop() {
		if n++; n%10 == 0 {
			sid = ""
		}
		tr, err := h.runner.Prepare(ctx, agent.TurnRequest{User: h.user, SessionID: sid, Message: "and now?"})
		if err != nil {
			b.Fatal(err)
		}
		res := tr.Run(ctx, &sink{})
		if res.Err != nil {
			b.Fatal(res.Err)
		}
		sid = res.SessionID
	}
}

package agent_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// A runner keeps a session's history between turns and reads only what
// was stored since: another replica's turn in between is in its next
// request, whole and in order.
func TestHistoryCacheSeesOtherReplica(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	other := h.newRunner(nil, nil, nil)
	h.fake.SetScript(func(r *anthropictest.Request) anthropictest.Reply {
		return anthropictest.Text("reply to "+r.LastUserText(), 5)
	})
	ctx := context.Background()
	run := func(r *agent.Runner, sid, msg string) *agent.Result {
		t.Helper()
		tr, err := r.Prepare(ctx, agent.TurnRequest{User: h.user, SessionID: sid, Message: msg})
		if err != nil {
			t.Fatal(err)
		}
		res := tr.Run(ctx, &sink{})
		if res.StopReason != coachd.TurnEndTurn {
			t.Fatalf("%s: %s %v", msg, res.StopReason, res.Err)
		}
		return res
	}
	sid := run(h.runner, "", "one").SessionID
	run(other, sid, "two")
	run(h.runner, sid, "three")
	run(other, sid, "four")
	run(h.runner, sid, "five")
	reqs := h.fake.Requests()
	last := reqs[len(reqs)-1].Messages()
	var got []string
	for _, m := range last {
		got = append(got, fmt.Sprintf("%s:%s", m.Role, coachd.BlocksText(m.Blocks)))
	}
	want := []string{"user:one", "assistant:reply to one", "user:two", "assistant:reply to two",
		"user:three", "assistant:reply to three", "user:four", "assistant:reply to four", "user:five"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("last request's messages:\n%q\nwant:\n%q", got, want)
	}
}

// A cached session deleted since, or another user's, is not found.
func TestHistoryCacheScoped(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	h.fake.SetScript(func(*anthropictest.Request) anthropictest.Reply { return anthropictest.Text("ok", 5) })
	ctx := context.Background()
	res := h.turn(agent.TurnRequest{Message: "hi"}, &sink{})
	bob := &coachd.User{Name: "bob", TokenBudget: 1000}
	if err := h.store.CreateUser(ctx, bob, "hash-bob"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.runner.Prepare(ctx, agent.TurnRequest{User: bob, SessionID: res.SessionID, Message: "mine?"}); coachd.ErrorCode(err) != coachd.ENOTFOUND {
		t.Fatalf("another user's cached session: %v, want not found", err)
	}
	if err := h.store.DeleteSession(ctx, h.user.ID, res.SessionID); err != nil {
		t.Fatal(err)
	}
	if _, err := h.runner.Prepare(ctx, agent.TurnRequest{User: h.user, SessionID: res.SessionID, Message: "again"}); coachd.ErrorCode(err) != coachd.ENOTFOUND {
		t.Fatalf("a deleted cached session: %v, want not found", err)
	}
}

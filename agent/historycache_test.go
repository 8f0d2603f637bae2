package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/tools"
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
	run := func(r *agent.Runner, sid, msg string) *agent.Result { return endTurn(t, r, h.user, sid, msg) }
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

// endTurn prepares and runs u's turn saying msg on session sid ("": a
// new one) with r, and fails the test unless the turn ended its turn.
func endTurn(t *testing.T, r *agent.Runner, u *coachd.User, sid, msg string) *agent.Result {
	t.Helper()
	ctx := context.Background()
	tr, err := r.Prepare(ctx, agent.TurnRequest{User: u, SessionID: sid, Message: msg})
	if err != nil {
		t.Fatal(err)
	}
	res := tr.Run(ctx, &sink{})
	if res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("%s: %s %v", msg, res.StopReason, res.Err)
	}
	return res
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

var cacheMark = regexp.MustCompile(`,"cache_control":\{[^}]*\}`)

// readCount is the real store, counting ReadTurn.
type readCount struct {
	coachd.Store
	reads atomic.Int32
}

func (r *readCount) ReadTurn(ctx context.Context, userID, id string, after int64) (*coachd.Session, []*coachd.Message, error) {
	r.reads.Add(1)
	return r.Store.ReadTurn(ctx, userID, id, after)
}

// A runner's next turn on a session starts from what its last turn there
// left (the session EndTurn returned, the history with that turn's
// messages) without reading the store, tool rounds and all, and sends the
// model the history as stored; a change in between (here a new title)
// refuses the admission, and the turn reads the session again.
func TestHistoryCacheOwnTurns(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	st := &readCount{Store: h.store}
	r := h.newRunner(append(tools.Builtins(), echoTool), func(string) (*agent.Agent, bool) { return h.agent, true },
		func(c *agent.Config) { c.Store = st })
	h.fake.SetScript(func(req *anthropictest.Request) anthropictest.Reply {
		if len(req.ToolResults()) == 0 && strings.HasPrefix(req.LastUserText(), "tool") {
			return anthropictest.Reply{Blocks: []anthropictest.BlockSpec{anthropictest.ToolUse("toolu_"+req.LastUserText(), "echo", `{"x":1}`)}}
		}
		return anthropictest.Text("reply "+strconv.Itoa(len(req.Messages())), 5)
	})
	ctx := context.Background()
	sid := ""
	run := func(msg string) {
		t.Helper()
		sid = endTurn(t, r, h.user, sid, msg).SessionID
		// The model saw the session as stored: all of it but the reply.
		stored := h.history(sid)
		reqs := h.fake.Requests()
		sent := reqs[len(reqs)-1].Messages()
		if len(sent) != len(stored)-1 {
			t.Fatalf("%s: the model got %d messages, the session holds %d before the reply", msg, len(sent), len(stored)-1)
		}
		for i, m := range sent {
			want, err := json.Marshal(stored[i].Blocks)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(m.Blocks)
			if err != nil {
				t.Fatal(err)
			}
			got = cacheMark.ReplaceAll(got, nil) // the request's cache breakpoints
			if m.Role != stored[i].Role || string(got) != string(want) {
				t.Fatalf("%s: message %d sent as %s %s, stored as %s %s", msg, i, m.Role, got, stored[i].Role, want)
			}
		}
	}
	run("one")
	run("tool two")
	run("three")
	run("tool four")
	if n := st.reads.Load(); n != 1 {
		t.Fatalf("four turns read the session %d times, want 1 (the first)", n)
	}
	title := "renamed"
	if _, err := h.store.UpdateSession(ctx, h.user.ID, sid, coachd.SessionUpdate{Title: &title}); err != nil {
		t.Fatal(err)
	}
	run("five")
	if n := st.reads.Load(); n != 2 {
		t.Fatalf("the turn after a change read the session %d times in all, want 2", n)
	}
	run("six")
	if n := st.reads.Load(); n != 2 {
		t.Fatalf("the turn after that read it again: %d reads, want 2", n)
	}
}

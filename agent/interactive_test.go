package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/tools"
)

// pause runs a turn that ends waiting on show_options, with an echo call in
// the same round whose result is held.
func pause(t *testing.T, h *harness) (*agent.Result, *sink) {
	t.Helper()
	h.fake.Enqueue(anthropictest.Blocks(
		anthropictest.TextBlock("Pick one:", 3),
		use("e1", "echo", `{"k":"v"}`),
		use("o1", "show_options", `{"prompt":"Which?","options":["Airport","Downtown"]}`),
	))
	s := &sink{}
	res := h.turn(agent.TurnRequest{Message: "where should I drive?"}, s)
	if res.StopReason != coachd.TurnAwaitingInput {
		t.Fatalf("stop %s err %v", res.StopReason, res.Err)
	}
	return res, s
}

func TestInteractive(t *testing.T) {
	t.Run("PauseAndResume", func(t *testing.T) {
		h := newHarness(t, agent.Limits{})
		res, s := pause(t, h)
		ev := s.of(coachd.EventInteractionRequested)
		if len(ev) != 1 || ev[0].ToolUseID != "o1" || !strings.Contains(string(ev[0].Input), "Airport") {
			t.Fatalf("interaction events %+v", ev)
		}
		sess, _ := h.store.FindSession(context.Background(), h.user.ID, res.SessionID)
		if sess.Pending == nil || sess.Pending.ToolUseID != "o1" || len(sess.Pending.Held) != 2 {
			t.Fatalf("pending %+v", sess.Pending)
		}
		h.fake.Enqueue(anthropictest.Text("Airport it is.", 5))
		res2 := h.turn(agent.TurnRequest{SessionID: res.SessionID, Answer: &agent.Answer{ToolUseID: "o1", Content: json.RawMessage(`"Airport"`)}}, &sink{})
		if res2.StopReason != coachd.TurnEndTurn {
			t.Fatalf("resume: %s %v", res2.StopReason, res2.Err)
		}
		got := h.fake.Requests()[1].ToolResults()
		if len(got) != 2 || got[0].ToolUseID != "e1" || got[1].ToolUseID != "o1" || got[1].ResultText() != "Airport" {
			t.Fatalf("sent results %+v", got)
		}
		sess, _ = h.store.FindSession(context.Background(), h.user.ID, res.SessionID)
		if sess.Pending != nil {
			t.Fatal("pending not cleared")
		}
		h.assertValidHistory(res.SessionID)
	})
	t.Run("Dismissed", func(t *testing.T) {
		h := newHarness(t, agent.Limits{})
		res, _ := pause(t, h)
		h.fake.Enqueue(anthropictest.Text("Sure, let's talk about that.", 5))
		res2 := h.turn(agent.TurnRequest{SessionID: res.SessionID, Message: "actually, something else"}, &sink{})
		if res2.StopReason != coachd.TurnEndTurn {
			t.Fatalf("%s %v", res2.StopReason, res2.Err)
		}
		req := h.fake.Requests()[1]
		got := req.ToolResults()
		if len(got) != 2 || !strings.HasPrefix(got[1].ResultText(), "dismissed") || req.LastUserText() != "actually, something else" {
			t.Fatalf("sent %+v / %q", got, req.LastUserText())
		}
		h.assertValidHistory(res.SessionID)
	})
	t.Run("ErrWrongID", func(t *testing.T) {
		h := newHarness(t, agent.Limits{})
		res, _ := pause(t, h)
		for _, a := range []*agent.Answer{
			{ToolUseID: "nope", Content: json.RawMessage(`"Airport"`)},
			{ToolUseID: "o1", Content: json.RawMessage(`""`)}, // fails the result schema
		} {
			_, err := h.runner.Prepare(context.Background(), agent.TurnRequest{User: h.user, SessionID: res.SessionID, Answer: a})
			if err == nil {
				t.Fatalf("%+v: want an error", a)
			}
		}
		_, err := h.runner.Prepare(context.Background(), agent.TurnRequest{User: h.user, SessionID: res.SessionID, Answer: &agent.Answer{ToolUseID: "nope", Content: json.RawMessage(`"x"`)}})
		if coachd.ErrorCode(err) != coachd.ECONFLICT {
			t.Fatalf("wrong id: got %v", err)
		}
		// Nothing was stored by the refused answers.
		if n := len(h.history(res.SessionID)); n != 2 {
			t.Fatalf("stored %d messages", n)
		}
	})
}

// TestBusy runs a turn and a second request for the same session, from
// the same Runner and from another Runner on the same database (as another
// replica would): the second gets turn_in_progress at once, or, with
// wait, queues (bounded by its context) and gets the session when the
// first turn ends.
func TestBusy(t *testing.T) {
	t.Run("SameProcess", func(t *testing.T) {
		h := newHarness(t, agent.Limits{})
		busy(t, h, h.runner)
	})
	t.Run("OtherReplica", func(t *testing.T) {
		h := newHarness(t, agent.Limits{})
		busy(t, h, h.newRunner(tools.Builtins(), func(string) (*agent.Agent, bool) { return h.agent, true }, nil))
	})
}

func busy(t *testing.T, h *harness, other *agent.Runner) {
	h.fake.Enqueue(anthropictest.Text("first", 5), anthropictest.Text("second", 5))
	t1, err := h.runner.Prepare(context.Background(), agent.TurnRequest{User: h.user, Message: "one"})
	if err != nil {
		t.Fatal(err)
	}
	sid := t1.SessionID()
	second := agent.TurnRequest{User: h.user, SessionID: sid, Message: "two"}
	if _, err := other.Prepare(context.Background(), second); coachd.ErrorCode(err) != coachd.ETURNINPROGRESS {
		t.Fatalf("want turn_in_progress, got %v", err)
	}
	second.Wait = true
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := other.Prepare(ctx, second); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want the wait to outlast the context, got %v", err)
	}
	got := make(chan *agent.Result, 1)
	go func() {
		t2, err := other.Prepare(context.Background(), second)
		if err != nil {
			t.Error(err)
			got <- nil
			return
		}
		got <- t2.Run(context.Background(), &sink{})
	}()
	if res := t1.Run(context.Background(), &sink{}); res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("first: %s", res.StopReason)
	}
	if res := <-got; res == nil || res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("second: %+v", res)
	}
	if n := len(h.history(sid)); n != 4 {
		t.Fatalf("stored %d messages", n)
	}
}

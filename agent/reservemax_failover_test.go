package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/tools"
)

// TestReserveMaxFailover: a round whose model call fails overloaded
// after the API counted its input (message_start) goes to the fallback
// model, which reads that input again. Under reserve: max the failed
// call's usage is charged too, so the fallback serves the round only
// when its call still fits what is left of the hold: spend never
// exceeds it.
func TestReserveMaxFailover(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rounds int
		billed int64 // the failed call's input, 0: as its size says
		calls  int
		stop   string
	}{
		// A hold for one round, which covers its input at a token a
		// byte: the failed call's dense input used most of it.
		{"ErrNoRoom", 1, 14000, 1, coachd.TurnError},
		{"OK", 3, 0, 2, coachd.TurnEndTurn}, // room left: the fallback serves the round
	} {
		t.Run(tc.name, func(t *testing.T) {
			ag := agent.DefaultAgent()
			ag.Model, ag.FallbackModel = "claude-sonnet-4-5", "claude-haiku-4-5"
			ag.Reserve, ag.MaxTokens = agent.ReserveMax, 100
			ag.Limits = agent.Limits{MaxRounds: tc.rounds}
			agents := func(string) (*agent.Agent, bool) { return ag, true }
			h := harnessOver(t, tools.Builtins(), agents)
			failed := anthropictest.Text("Noted.", 1).ErrorAfter(1, "overloaded_error", "Overloaded")
			if tc.billed > 0 {
				failed = failed.WithUsage(coachd.Usage{CacheCreationInputTokens: tc.billed, OutputTokens: 1})
			}
			h.fake.Enqueue(failed, anthropictest.Text("Noted.", 1))
			res := h.turn(agent.TurnRequest{Message: strings.Repeat("Here is my training log for the week. ", 400)}, &sink{})
			if res.StopReason != tc.stop || len(h.fake.Requests()) != tc.calls {
				t.Fatalf("stop %s (%v) after %d calls, want %s after %d", res.StopReason, res.Err, len(h.fake.Requests()), tc.stop, tc.calls)
			}
			if tc.stop == coachd.TurnError && (res.Err == nil || res.Err.Code != coachd.EUPSTREAMBUSY) {
				t.Fatalf("err %v, want the overloaded model's", res.Err)
			}
			r := h.firstReservation()
			if r.Charged > r.Estimate || r.Charged == 0 {
				t.Fatalf("charged %d of a %d hold (reserve: max must never overspend, a failed call's input included)", r.Charged, r.Estimate)
			}
			if drift, err := h.store.CheckLedger(context.Background()); err != nil || len(drift) > 0 {
				t.Fatalf("ledger drift %+v %v", drift, err)
			}
		})
	}
}

// TestReserveMaxFailoverDense: the check before the fallback serves a
// round priced the round's input by its size, a token per 4 bytes, but
// the failed call billed that input already: dense text (emoji, CJK)
// bills more, the fallback read it all again at that count, and the
// turn charged past its hold. The failed call's input is what the
// fallback's round takes at least.
func TestReserveMaxFailoverDense(t *testing.T) {
	ag := agent.DefaultAgent()
	ag.Model, ag.FallbackModel = "claude-sonnet-4-5", "claude-haiku-4-5"
	ag.Reserve, ag.MaxTokens = agent.ReserveMax, 100
	ag.Limits = agent.Limits{MaxRounds: 1}
	h := harnessOver(t, tools.Builtins(), func(string) (*agent.Agent, bool) { return ag, true })
	tr, err := h.runner.Prepare(context.Background(), agent.TurnRequest{User: h.user, Message: strings.Repeat("🏃🚴🏊 ", 1500)})
	if err != nil {
		t.Fatal(err)
	}
	// The emoji bill about a token every 1.7 bytes: six tenths of the
	// hold, which covers the round at a token a byte.
	in := h.firstReservation().Estimate * 6 / 10
	h.fake.Enqueue(anthropictest.Text("Noted.", 1).WithUsage(usage(in, 1)).ErrorAfter(1, "overloaded_error", "Overloaded"),
		anthropictest.Text("Noted.", 1).WithUsage(usage(in, 5)))
	res := tr.Run(context.Background(), &sink{})
	r := h.firstReservation()
	if r.Charged > r.Estimate {
		t.Fatalf("stop %s after %d calls: charged %d of a %d hold", res.StopReason, len(h.fake.Requests()), r.Charged, r.Estimate)
	}
	if res.StopReason != coachd.TurnError || res.Err == nil || res.Err.Code != coachd.EUPSTREAMBUSY {
		t.Fatalf("stop %s (%v), want the overloaded model's error", res.StopReason, res.Err)
	}
}

package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestCountTokensEstimate: with CountTokens on, the reservation holds the
// input count_tokens answered plus max_tokens; when counting fails it
// falls back to the size estimate and the turn still runs.
func TestCountTokensEstimate(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	ag := &agent.Agent{Name: "counted", MaxTokens: 1000, Prompt: "Be brief."}
	r := h.newRunner(nil, func(string) (*agent.Agent, bool) { return ag, true },
		func(c *agent.Config) { c.CountTokens = true })
	estimate := func() int64 {
		var n int64
		if err := h.store.SQL().QueryRow(`SELECT estimate FROM reservations ORDER BY created_at DESC, id DESC LIMIT 1`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	run := func(msg string) {
		h.fake.Enqueue(anthropictest.Text("ok", 2))
		tr, err := r.Prepare(context.Background(), agent.TurnRequest{User: h.user, Message: msg})
		if err != nil {
			t.Fatal(err)
		}
		if res := tr.Run(context.Background(), &sink{}); res.StopReason != coachd.TurnEndTurn {
			t.Fatalf("%s: %v", res.StopReason, res.Err)
		}
	}

	h.fake.SetCount(4321)
	run("count me")
	if got, want := estimate(), int64(4321+1000); got != want {
		t.Fatalf("estimate %d, want %d", got, want)
	}
	var counted bool
	for _, req := range h.fake.Requests() {
		counted = counted || strings.HasSuffix(req.Path, "/count_tokens")
	}
	if !counted {
		t.Fatal("count_tokens was never called")
	}

	// count_tokens is overloaded: the size estimate is used instead.
	h.fake.SetCount(-1)
	run("and me")
	if got := estimate(); got == 4321+1000 || got <= 1000 || got > 1000+1000 {
		t.Fatalf("fallback estimate %d", got)
	}
}

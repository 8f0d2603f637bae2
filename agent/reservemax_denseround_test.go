package agent_test

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/tools"
)

// denseBilled is what the fake bills a request's input: its ASCII at 4
// bytes a token, as the size estimate assumes, and every wider character
// (CJK: 3 bytes) at a token each, as the tokenizer splits it.
func denseBilled(raw []byte) int64 {
	var ascii, wide int64
	for len(raw) > 0 {
		r, n := utf8.DecodeRune(raw)
		raw = raw[n:]
		if r < utf8.RuneSelf {
			ascii++
		} else {
			wide++
		}
	}
	return ascii/4 + wide
}

// TestReserveMaxDenseToolResult: under reserve: max the check before a
// later round priced what the last round added (a tool's result) at 4
// bytes a token. A tool returning dense text (CJK, emoji, base64) makes
// the next round's input far larger than that: the round ran and the
// turn charged past its hold, so its user spent past the budget. The
// tool here returns what fits the hold at 4 bytes a token and not at a
// token a character.
func TestReserveMaxDenseToolResult(t *testing.T) {
	ag := agent.DefaultAgent()
	ag.Reserve, ag.MaxTokens = agent.ReserveMax, 100
	ag.Limits = agent.Limits{MaxRounds: 2}
	// The hold left once round 1 is spent and round 2 sends it all again
	// with its max_tokens, less a margin for the round's own blocks: the
	// tool's result fills it at 4 bytes a token, and overflows it at a
	// token a character.
	var hold, first atomic.Int64 // the turn's hold; round 1's billed input
	dense := testTool{"dense", func(context.Context, coachd.ToolCall) (coachd.ToolResult, error) {
		left := hold.Load() - (first.Load() + 5) - first.Load() - ag.MaxTokens - 300
		return coachd.ToolResult{Content: strings.Repeat("机", int(4*left/3))}, nil
	}}
	ag.Tools = append(ag.Tools, "dense")
	h := harnessOver(t, append(tools.Builtins(), dense), func(string) (*agent.Agent, bool) { return ag, true })
	h.fake.SetScript(func(r *anthropictest.Request) anthropictest.Reply {
		in := denseBilled(r.Raw)
		if first.CompareAndSwap(0, in) {
			return anthropictest.Blocks(use("d1", "dense", `{}`)).WithUsage(usage(in, 5))
		}
		return anthropictest.Text("好的。", 1).WithUsage(usage(in, 5))
	})
	tr, err := h.runner.Prepare(context.Background(), agent.TurnRequest{User: h.user,
		Message: strings.Repeat("Here is my training log for the week. ", 500)})
	if err != nil {
		t.Fatal(err)
	}
	hold.Store(h.firstReservation().Estimate)
	res := tr.Run(context.Background(), &sink{})
	r := h.mustSettled(res, coachd.ReservationFinalized)
	if n := len(h.fake.Requests()); n == 0 || len(res.ToolCalls) != 1 {
		t.Fatalf("%d calls, tool calls %v: the tool never ran", n, res.ToolCalls)
	}
	if r.Charged > r.Estimate {
		t.Fatalf("stop %s after %d rounds: charged %d of a %d hold", res.StopReason, len(h.fake.Requests()), r.Charged, r.Estimate)
	}
}

// TestReserveMaxDenseWhileShortened: the round in which older turns'
// tool results start being sent shortened (the history passed
// compaction's shorten_after) is the one a dense tool result arrives in.
// The request shrinks by the shortened results, which bill a token per 4
// bytes of ASCII, and grows by the dense result, a token a character:
// priced both at a token a byte, the shrink hid the growth, the round ran
// and the turn charged past its hold.
func TestReserveMaxDenseWhileShortened(t *testing.T) {
	const old = 20000 // bytes of ASCII an earlier turn's tool returned
	ag := agent.DefaultAgent()
	ag.MaxTokens = 50
	ag.Compaction = &agent.Compaction{ShortenAfter: old/4 + 2000, KeepTurns: 1}
	read := testTool{"read", func(_ context.Context, c coachd.ToolCall) (coachd.ToolResult, error) {
		switch {
		case strings.Contains(string(c.Input), "log"):
			return coachd.ToolResult{Content: strings.Repeat("Ran 5 km at an easy pace. ", old/26)}, nil
		case strings.Contains(string(c.Input), "dense"):
			return coachd.ToolResult{Content: strings.Repeat("机", old*9/10/3)}, nil
		}
		return coachd.ToolResult{Content: "ok"}, nil
	}}
	ag.Tools = append(ag.Tools, "read")
	h := harnessOver(t, append(tools.Builtins(), read), func(string) (*agent.Agent, bool) { return ag, true })
	var script atomic.Pointer[[]string] // the tool inputs of the coming rounds; then text
	var calls atomic.Int64
	h.fake.SetScript(func(r *anthropictest.Request) anthropictest.Reply {
		in := usage(denseBilled(r.Raw), 5)
		n := int(calls.Add(1)) - 1
		if s := *script.Load(); n < len(s) {
			return anthropictest.Blocks(use("r"+strconv.Itoa(n), "read", s[n])).WithUsage(in)
		}
		return anthropictest.Text("Done.", 1).WithUsage(in)
	})
	script.Store(&[]string{`{"what":"log"}`})
	res := h.turn(agent.TurnRequest{Message: "Read my log."}, &sink{})
	if res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("first turn: stop %s %v", res.StopReason, res.Err)
	}
	ag.Reserve = agent.ReserveMax
	ag.Limits = agent.Limits{MaxRounds: 4}
	calls.Store(0)
	script.Store(&[]string{`{"what":"a"}`, `{"what":"b"}`, `{"what":"dense"}`})
	res = h.turn(agent.TurnRequest{SessionID: res.SessionID, Message: "And now?"}, &sink{})
	r := h.lastReservation()
	if calls.Load() < 3 {
		t.Fatalf("stop %s after %d calls: the dense result was never read", res.StopReason, calls.Load())
	}
	if r.Charged > r.Estimate {
		t.Fatalf("stop %s after %d calls: charged %d of a %d hold", res.StopReason, calls.Load(), r.Charged, r.Estimate)
	}
}

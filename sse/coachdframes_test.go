package sse

import (
	"math"
	"testing"

	"github.com/coachd/coachd"
)

// The payloads of the coachd dialect's frames that encodeCoachd writes by
// hand, as they were encoded before (through frame): the oracle.
type coachdStart struct {
	SessionID string `json:"session_id"`
	MessageID string `json:"message_id"`
}

type coachdEnd struct {
	SessionID  string `json:"session_id"`
	TokensUsed int64  `json:"tokens_used"`
	LatencyMS  int64  `json:"latency_ms"`
	StopReason string `json:"stop_reason"`
}

// coachdByReflection is encodeCoachd's frame for ev as encoding/json
// writes it.
func coachdByReflection(ev coachd.Event) []byte {
	switch ev.Type {
	case coachd.EventTurnStarted:
		return frame(nil, "message_start", coachdStart{ev.SessionID, ev.MessageID})
	case coachd.EventToolCallStarted:
		return frame(nil, "function_call", coachdCall{ev.ToolUseID, ev.ToolName})
	case coachd.EventToolResult:
		if !ev.IsError {
			return frame(nil, "function_result", coachdResult{ev.ToolUseID, ev.ToolName, ev.Result, false, ev.Denied})
		}
	case coachd.EventRoundBoundary:
		return frame(nil, "round_boundary", struct{}{})
	case coachd.EventUsage:
		return frame(nil, "usage", usageOf(ev.Usage))
	case coachd.EventTurnEnded:
		return frame(nil, "message_end", coachdEnd{ev.SessionID, tokensUsed(ev.Usage), ev.LatencyMS, ev.StopReason})
	}
	return encodeCoachd(nil, ev)
}

// TestCoachdFramesByHand: the frames a turn sends every time, written
// without reflection, are byte for byte what encoding/json writes, for
// strings that need escaping and numbers at their edges.
func TestCoachdFramesByHand(t *testing.T) {
	zero, big := int64(0), int64(math.MaxInt64)
	strs := []string{"", "sess_1", "a <b> & \"c\"\n\t\u2028\u2029\xff\x00 é"}
	var evs []coachd.Event
	for _, s := range strs {
		evs = append(evs,
			coachd.Event{Type: coachd.EventTurnStarted, SessionID: s, MessageID: s + "m"},
			coachd.Event{Type: coachd.EventToolCallStarted, ToolUseID: s, ToolName: s + "n"},
			coachd.Event{Type: coachd.EventToolResult, ToolUseID: s, ToolName: "save_note", Result: `{"ok":true}` + s},
			coachd.Event{Type: coachd.EventToolResult, ToolUseID: s, ToolName: "x", Result: s, Denied: true},
			coachd.Event{Type: coachd.EventToolResult, ToolUseID: s, ToolName: "x", Result: s, IsError: true},
			coachd.Event{Type: coachd.EventRoundBoundary},
			coachd.Event{Type: coachd.EventTurnEnded, SessionID: s, StopReason: s + "end_turn", LatencyMS: -5},
			coachd.Event{Type: coachd.EventTurnEnded, SessionID: s, Usage: &coachd.TurnUsage{TokensUsed: 42}, LatencyMS: 12},
			coachd.Event{Type: coachd.EventUsage, Usage: &coachd.TurnUsage{Unit: coachd.BudgetUnit(s)}},
		)
	}
	for _, u := range []*coachd.TurnUsage{
		nil,
		{Usage: coachd.Usage{InputTokens: 1, OutputTokens: 22, CacheReadInputTokens: 1091, CacheCreationInputTokens: 42}, TokensUsed: 1156,
			BudgetRemaining: &big, Billed: 1156, Unit: "tokens", CostUSD: 0.0008177999999999999},
		{BudgetRemaining: &zero, CostUSD: -2.5, Billed: -3},
		{CostUSD: 1e-7}, {CostUSD: 1e21}, {CostUSD: 123456789.125}, {CostUSD: 1e-6}, {CostUSD: math.NaN()}, {CostUSD: math.Inf(-1)},
	} {
		evs = append(evs, coachd.Event{Type: coachd.EventUsage, Usage: u}, coachd.Event{Type: coachd.EventTurnEnded, Usage: u})
	}
	for _, ev := range evs {
		if got, want := encodeCoachd(nil, ev), coachdByReflection(ev); string(got) != string(want) {
			t.Errorf("%s:\n got %q\nwant %q", ev.Type, got, want)
		}
	}
}

// FuzzCoachdFrames: whatever the strings and numbers, the frames written
// by hand are encoding/json's.
func FuzzCoachdFrames(f *testing.F) {
	f.Add("sess_1", "msg_1", "save_note", int64(5), 0.0018, int64(3))
	f.Add("<\u2028>", "\xff", "", int64(-1), 1e-9, int64(-1))
	f.Fuzz(func(t *testing.T, a, b, c string, n int64, cost float64, remaining int64) {
		u := &coachd.TurnUsage{Usage: coachd.Usage{InputTokens: n, OutputTokens: -n}, TokensUsed: n, Billed: n, Unit: coachd.BudgetUnit(c), CostUSD: cost}
		if remaining >= 0 {
			u.BudgetRemaining = &remaining
		}
		for _, ev := range []coachd.Event{
			{Type: coachd.EventTurnStarted, SessionID: a, MessageID: b},
			{Type: coachd.EventToolCallStarted, ToolUseID: a, ToolName: c},
			{Type: coachd.EventToolResult, ToolUseID: a, ToolName: c, Result: b, Denied: n%2 == 0},
			{Type: coachd.EventUsage, Usage: u},
			{Type: coachd.EventTurnEnded, SessionID: a, StopReason: b, LatencyMS: n, Usage: u},
		} {
			if got, want := encodeCoachd(nil, ev), coachdByReflection(ev); string(got) != string(want) {
				t.Fatalf("%s:\n got %q\nwant %q", ev.Type, got, want)
			}
		}
	})
}

package sse_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sse"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

var dialects = []string{sse.Coachd, sse.ASP, sse.Sage}

func int64p(n int64) *int64 { return &n }

// conversation is one scripted turn that touches every event type: parallel
// tool calls, a failed tool, a round boundary, interactions, session
// changes, usage, an upstream error and the turn's end.
func conversation() []coachd.Event {
	usage := &coachd.TurnUsage{
		Usage:           coachd.Usage{InputTokens: 1200, OutputTokens: 340, CacheReadInputTokens: 800},
		TokensUsed:      2340,
		BudgetRemaining: int64p(97660),
	}
	evs := []coachd.Event{
		{Type: coachd.EventTurnStarted, SessionID: "sess_01", MessageID: "msg_01"},
		{Type: coachd.EventThinkingDelta, Text: "They want a plan; check notes and the weather."},
		{Type: coachd.EventTextDelta, Text: "Let me look "},
		{Type: coachd.EventTextDelta, Text: "at your notes <and> the \"forecast\".\n"},
		{Type: coachd.EventToolCallStarted, ToolUseID: "toolu_01", ToolName: "search_notes"},
		{Type: coachd.EventToolCallStarted, ToolUseID: "toolu_02", ToolName: "get_weather"},
		{Type: coachd.EventToolCallReady, ToolUseID: "toolu_01", ToolName: "search_notes", Input: json.RawMessage(`{"query": "running"}`)},
		{Type: coachd.EventToolCallReady, ToolUseID: "toolu_02", ToolName: "get_weather", Input: json.RawMessage(`{"city":"Lisbon"}`)},
		{Type: coachd.EventToolResult, ToolUseID: "toolu_01", ToolName: "search_notes", Result: "Found 1 note:\n1. Prefers morning runs"},
		{Type: coachd.EventToolResult, ToolUseID: "toolu_02", ToolName: "get_weather", Result: "Error: weather service timed out", IsError: true},
		{Type: coachd.EventRoundBoundary},
		{Type: coachd.EventTextDelta, Text: "Morning runs it is. Pick one:"},
		{Type: coachd.EventToolCallStarted, ToolUseID: "toolu_03", ToolName: "show_options"},
		{Type: coachd.EventToolCallReady, ToolUseID: "toolu_03", ToolName: "show_options", Input: json.RawMessage(`{"prompt":"When?","options":["6am","7am","8am"]}`)},
		{Type: coachd.EventInteractionRequested, ToolUseID: "toolu_03", ToolName: "show_options", Input: json.RawMessage(`{"prompt":"When?","options":["6am","7am","8am"]}`),
			ExpiresAt: time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC)}, // the coachd dialect's only
		{Type: coachd.EventInteractionRequested, ToolUseID: "toolu_04", ToolName: "show_pulse_check", Input: json.RawMessage(`{"question":"How are you feeling?"}`)},
		{Type: coachd.EventInteractionRequested, ToolUseID: "toolu_05", ToolName: "ask_rating", Input: json.RawMessage(`{"scale":5}`)},
		{Type: coachd.EventSessionChanged, Change: coachd.ChangeModeEntered, Mode: "weekly_review"},
		{Type: coachd.EventSessionChanged, Change: coachd.ChangeArcCompleted, Mode: "weekly_review"},
		{Type: coachd.EventSessionChanged, Change: coachd.ChangeCompleted},
		{Type: coachd.EventUsage, Usage: usage},
		{Type: coachd.EventError, Err: &coachd.Error{
			Code:       coachd.EUPSTREAMBUSY,
			Message:    "AI service is busy, please retry in a few seconds.",
			Retryable:  true,
			RetryAfter: 2500 * time.Millisecond,
		}},
		{Type: coachd.EventTurnEnded, SessionID: "sess_01", StopReason: coachd.TurnAwaitingInput, LatencyMS: 2340, Usage: usage},
	}
	for i := range evs {
		evs[i].Seq = int64(i + 1)
	}
	return evs
}

func encodeAll(dialect string, evs []coachd.Event) []byte {
	var out []byte
	for _, ev := range evs {
		out = sse.Encode(out, dialect, ev)
	}
	return append(out, sse.Done(dialect)...)
}

func TestEncodeGolden(t *testing.T) {
	for _, d := range dialects {
		t.Run(d, func(t *testing.T) {
			got := encodeAll(d, conversation())
			path := filepath.Join("testdata", "golden", d+".sse")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from golden file %s (go test -update rewrites it)\n got:\n%s\nwant:\n%s", d, path, got, want)
			}
			if again := encodeAll(d, conversation()); !bytes.Equal(again, got) {
				t.Errorf("encoding is not deterministic")
			}
		})
	}
}

func TestEncodeError(t *testing.T) {
	ev := coachd.Event{Type: coachd.EventError, Err: &coachd.Error{
		Code:    coachd.ERATELIMITED,
		Message: "Monthly message limit (50) reached.",
		Details: []coachd.FieldError{{Field: "message", Message: "too many", Code: "limit"}},
		// type collides with a fixed field and is dropped; a channel cannot
		// be encoded and is dropped; the rest follow in key order.
		Extra: map[string]any{"usage": 50, "limit": 50, "type": "spoof", "bad": make(chan int)},
		Err:   os.ErrDeadlineExceeded,
	}}
	tests := []struct {
		dialect, want string
	}{
		{sse.Coachd, "event: error\ndata: {\"type\":\"rate_limit_exceeded\",\"message\":\"Monthly message limit (50) reached.\",\"retryable\":false," +
			"\"details\":[{\"field\":\"message\",\"message\":\"too many\",\"code\":\"limit\"}],\"limit\":50,\"usage\":50}\n\n"},
		{sse.ASP, "data: {\"type\":\"error\",\"code\":\"rate_limit_exceeded\",\"message\":\"Monthly message limit (50) reached.\"}\n\n"},
		{sse.Sage, "data: {\"error\":\"Monthly message limit (50) reached.\"}\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.dialect, func(t *testing.T) {
			if got := string(sse.Encode(nil, tt.dialect, ev)); got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
	t.Run("NoErr", func(t *testing.T) {
		got := string(sse.Encode(nil, sse.Coachd, coachd.Event{Type: coachd.EventError}))
		want := "event: error\ndata: {\"type\":\"internal\",\"message\":\"internal error\",\"retryable\":false}\n\n"
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})
}

func TestEncodeEdgeCases(t *testing.T) {
	tests := []struct {
		name, dialect string
		ev            coachd.Event
		want          string
	}{
		{"InvalidInput", sse.Coachd, coachd.Event{Type: coachd.EventInteractionRequested, ToolUseID: "t", ToolName: "x", Input: json.RawMessage(`{"a":`)},
			"event: interaction\ndata: {\"tool_use_id\":\"t\",\"name\":\"x\",\"input\":{}}\n\n"},
		{"OptionsMissing", sse.Sage, coachd.Event{Type: coachd.EventInteractionRequested, ToolUseID: "t", ToolName: "show_options", Input: json.RawMessage(`{"options":null}`)},
			"data: {\"showOptions\":{\"options\":[],\"toolUseId\":\"t\"}}\n\n"},
		{"ArcWithoutMode", sse.Sage, coachd.Event{Type: coachd.EventSessionChanged, Change: coachd.ChangeArcCompleted},
			"data: {\"arcCompleted\":true}\n\n"},
		{"UsageSummed", sse.Coachd, coachd.Event{Type: coachd.EventTurnEnded, SessionID: "s", StopReason: "end_turn", Usage: &coachd.TurnUsage{Usage: coachd.Usage{InputTokens: 3, OutputTokens: 4}}},
			"event: message_end\ndata: {\"session_id\":\"s\",\"tokens_used\":7,\"latency_ms\":0,\"stop_reason\":\"end_turn\"}\n\n"},
		{"NoUsage", sse.Coachd, coachd.Event{Type: coachd.EventUsage},
			"event: usage\ndata: {\"input_tokens\":0,\"output_tokens\":0,\"cache_read_input_tokens\":0,\"cache_creation_input_tokens\":0,\"tokens_used\":0}\n\n"},
		{"EmptyDialectIsCoachd", "", coachd.Event{Type: coachd.EventRoundBoundary}, "event: round_boundary\ndata: {}\n\n"},
		{"UnknownDialect", "smoke-signals", coachd.Event{Type: coachd.EventTextDelta, Text: "hi"}, ""},
		{"UnknownEvent", sse.Coachd, coachd.Event{Type: "teleport"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(sse.Encode(nil, tt.dialect, tt.ev)); got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
	t.Run("Appends", func(t *testing.T) {
		got := string(sse.Encode([]byte("prefix;"), sse.Sage, coachd.Event{Type: coachd.EventTextDelta, Text: "a"}))
		if want := "prefix;data: {\"text\":\"a\"}\n\n"; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})
}

func TestValidDialect(t *testing.T) {
	for _, d := range dialects {
		if !sse.ValidDialect(d) {
			t.Errorf("ValidDialect(%q) = false", d)
		}
	}
	for _, d := range []string{"", "SSE", "Coachd", "openai"} {
		if sse.ValidDialect(d) {
			t.Errorf("ValidDialect(%q) = true", d)
		}
	}
}

// TestFraming encodes every event type with CR, LF and CRLF in every
// string field and checks each frame is well-formed SSE: optional event
// line, exactly one data line of valid JSON, blank-line terminated, and no
// CR anywhere.
func TestFraming(t *testing.T) {
	const nasty = "line one\nline two\r\nthree\rfour\u2028five"
	input := json.RawMessage("{\n\"options\": [\"a\\nb\", \"c\"],\r\n \"note\": \"" + "x\\r" + "\"\n}")
	e := &coachd.Error{Code: coachd.EAPI, Message: nasty, Extra: map[string]any{"hint": nasty}}
	var evs []coachd.Event
	for _, typ := range []coachd.EventType{
		coachd.EventTurnStarted, coachd.EventTextDelta, coachd.EventThinkingDelta,
		coachd.EventToolCallStarted, coachd.EventToolCallReady, coachd.EventToolResult,
		coachd.EventRoundBoundary, coachd.EventUsage, coachd.EventTurnEnded, coachd.EventError,
	} {
		evs = append(evs, coachd.Event{Type: typ, SessionID: nasty, MessageID: nasty, Text: nasty,
			ToolUseID: nasty, ToolName: nasty, Input: input, Result: nasty, StopReason: nasty, Err: e})
	}
	for _, name := range []string{"show_options", "show_pulse_check", nasty} {
		evs = append(evs, coachd.Event{Type: coachd.EventInteractionRequested, ToolUseID: nasty, ToolName: name, Input: input})
	}
	for _, c := range []string{coachd.ChangeCompleted, coachd.ChangeModeEntered, coachd.ChangeArcCompleted} {
		evs = append(evs, coachd.Event{Type: coachd.EventSessionChanged, Change: c, Mode: nasty})
	}
	for _, d := range dialects {
		t.Run(d, func(t *testing.T) {
			for _, ev := range evs {
				out := string(sse.Encode(nil, d, ev))
				if out == "" {
					continue
				}
				checkFrame(t, ev, out)
			}
		})
	}
}

func checkFrame(t *testing.T, ev coachd.Event, out string) {
	t.Helper()
	if strings.ContainsRune(out, '\r') {
		t.Fatalf("%s: CR in frame %q", ev.Type, out)
	}
	body, ok := strings.CutSuffix(out, "\n\n")
	if !ok {
		t.Fatalf("%s: frame not blank-line terminated: %q", ev.Type, out)
	}
	lines := strings.Split(body, "\n")
	if len(lines) == 2 {
		if !strings.HasPrefix(lines[0], "event: ") || strings.ContainsAny(lines[0][len("event: "):], " \n") {
			t.Fatalf("%s: bad event line %q", ev.Type, lines[0])
		}
		lines = lines[1:]
	}
	if len(lines) != 1 {
		t.Fatalf("%s: want one data line, got %q", ev.Type, body)
	}
	data, ok := strings.CutPrefix(lines[0], "data: ")
	if !ok || !json.Valid([]byte(data)) {
		t.Fatalf("%s: data line is not JSON: %q", ev.Type, lines[0])
	}
	if strings.ContainsRune(data, '\u2028') {
		t.Fatalf("%s: raw U+2028 in data", ev.Type)
	}
}

package sse_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sse"
)

// stream writes events through a Writer in dialect and returns the body.
func stream(t *testing.T, dialect string, evs ...coachd.Event) string {
	t.Helper()
	rec := httptest.NewRecorder()
	sw := sse.NewWriter(rec, httptest.NewRequest("POST", "/v1/chat/stream", nil), dialect, -1)
	for _, ev := range evs {
		if err := sw.Send(ev); err != nil {
			t.Fatal(err)
		}
	}
	sw.Close()
	return rec.Body.String()
}

func ended(stop string) coachd.Event {
	return coachd.Event{Type: coachd.EventTurnEnded, SessionID: "sess_1", StopReason: stop}
}

func TestStreamEnds(t *testing.T) {
	busy := coachd.Event{Type: coachd.EventError, Err: &coachd.Error{Code: coachd.EUPSTREAMBUSY, Message: "AI service is busy", Retryable: true}}
	for _, tc := range []struct {
		name, dialect string
		evs           []coachd.Event
		want          string
	}{
		// Seed 004: the stream ends at an error; no message_end after it.
		{"CoachdErrorEnds", sse.Coachd, []coachd.Event{text("Hi"), busy, ended(coachd.TurnError)},
			"event: content_delta\ndata: {\"text\":\"Hi\"}\n\nevent: error\ndata: {\"type\":\"rate_limit\",\"message\":\"AI service is busy\",\"retryable\":true}\n\n"},
		{"CoachdMaxRounds", sse.Coachd, []coachd.Event{ended(coachd.TurnMaxRounds)},
			"event: message_end\ndata: {\"session_id\":\"sess_1\",\"tokens_used\":0,\"latency_ms\":0,\"stop_reason\":\"max_rounds\"}\n\n"},
		// Seed 000: the round limit is an error before the stop.
		{"ASPMaxRounds", sse.ASP, []coachd.Event{ended(coachd.TurnMaxRounds)},
			"data: {\"type\":\"error\",\"code\":\"max_rounds\",\"message\":\"Tool loop exceeded MAX_STEPS\"}\n\ndata: {\"type\":\"message_stop\",\"stop_reason\":\"max_rounds\"}\n\n"},
		// The session's last reply: asp says why no turn follows.
		{"ASPSessionFull", sse.ASP, []coachd.Event{ended(coachd.TurnSessionFull)},
			"data: {\"type\":\"error\",\"code\":\"session_full\",\"message\":\"The session is full: start a new session\"}\n\ndata: {\"type\":\"message_stop\",\"stop_reason\":\"session_full\"}\n\n"},
		{"ASPEndTurn", sse.ASP, []coachd.Event{ended(coachd.TurnEndTurn)},
			"data: {\"type\":\"message_stop\",\"stop_reason\":\"end_turn\"}\n\n"},
		{"ASPErrorOnce", sse.ASP, []coachd.Event{busy, ended(coachd.TurnDeadline)},
			"data: {\"type\":\"error\",\"code\":\"rate_limit\",\"message\":\"AI service is busy\",\"retryable\":true}\n\ndata: {\"type\":\"message_stop\",\"stop_reason\":\"deadline\"}\n\n"},
		// Seed 002: the breaker's message, and the 55 s guard's wrap-up.
		{"SageCircuit", sse.Sage, []coachd.Event{ended(coachd.TurnCircuitOpen)},
			"data: {\"error\":\"Multiple tool executions failed. Please try again.\"}\n\ndata: [DONE]\n\n"},
		{"SageDeadline", sse.Sage, []coachd.Event{text("So"), ended(coachd.TurnDeadline)},
			"data: {\"text\":\"So\"}\n\ndata: {\"text\":\"\\n\\n[Wrapping up — session took longer than expected.]\"}\n\ndata: [DONE]\n\n"},
		// Seed 002's guard runs at the top of an iteration, after the
		// last tool round's "enqueue({ roundBoundary: true })" (lines
		// 225-229, 338): its client resets the shimmer there.
		{"SageDeadlineAfterTools", sse.Sage, []coachd.Event{
			{Type: coachd.EventToolCallStarted, ToolUseID: "toolu_1", ToolName: "save_file"},
			{Type: coachd.EventUsage}, {Type: coachd.EventToolCallReady, ToolUseID: "toolu_1", ToolName: "save_file", Input: []byte(`{}`)},
			{Type: coachd.EventToolResult, ToolUseID: "toolu_1", Result: "{}"}, ended(coachd.TurnDeadline)},
			"data: {\"toolCall\":{\"id\":\"toolu_1\",\"name\":\"save_file\"}}\n\ndata: {\"roundBoundary\":true}\n\n" +
				"data: {\"text\":\"\\n\\n[Wrapping up — session took longer than expected.]\"}\n\ndata: [DONE]\n\n"},
		{"SageToolLimit", sse.Sage, []coachd.Event{ended(coachd.TurnToolLimit)},
			"data: {\"error\":\"Tool loop exceeded its tool call limit\"}\n\ndata: [DONE]\n\n"},
		// Seed 002's loop leaves "while (iteration < MAX_TOOL_ITERATIONS)"
		// after its last round's roundBoundary, without an error.
		{"SageMaxRounds", sse.Sage, []coachd.Event{ended(coachd.TurnMaxRounds)},
			"data: {\"roundBoundary\":true}\n\ndata: [DONE]\n\n"},
		{"SageEndTurn", sse.Sage, []coachd.Event{ended(coachd.TurnAwaitingInput)}, "data: [DONE]\n\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := stream(t, tc.dialect, tc.evs...); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// Seed 000 passes a tool's result object on: JSON results stay JSON.
func TestASPToolResultJSON(t *testing.T) {
	got := stream(t, sse.ASP,
		coachd.Event{Type: coachd.EventToolResult, ToolUseID: "toolu_1", Result: `{"rank":"Diamond","mmr":1200}`},
		coachd.Event{Type: coachd.EventToolResult, ToolUseID: "toolu_2", Result: "plain text", IsError: true})
	want := "data: {\"type\":\"tool_result\",\"tool_use_id\":\"toolu_1\",\"content\":{\"rank\":\"Diamond\",\"mmr\":1200}}\n\n" +
		"data: {\"type\":\"tool_result\",\"tool_use_id\":\"toolu_2\",\"content\":\"plain text\",\"is_error\":true}\n\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestSageToolCallID: the sage toolCall frames a round sends as its tools
// are about to run carry the id of the event that released them, so a
// client resuming from there (Last-Event-ID) is not sent them again.
func TestSageToolCallID(t *testing.T) {
	evs := []coachd.Event{
		{Type: coachd.EventTextDelta, Text: "So", Turn: 1, Seq: 2},
		{Type: coachd.EventToolCallStarted, ToolUseID: "toolu_1", ToolName: "save_file", Turn: 1, Seq: 3},
		{Type: coachd.EventUsage, Turn: 1, Seq: 4},
		{Type: coachd.EventToolCallReady, ToolUseID: "toolu_1", ToolName: "save_file", Input: []byte(`{}`), Turn: 1, Seq: 5},
	}
	want := "id: 1:2\ndata: {\"text\":\"So\"}\n\nid: 1:5\ndata: {\"toolCall\":{\"id\":\"toolu_1\",\"name\":\"save_file\"}}\n\n"
	if got := stream(t, sse.Sage, evs...); got != want+"data: [DONE]\n\n" {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestCutCall: a call the reply was cut in ends in each dialect as that
// dialect's client expects: the coachd and ai-sdk clients saw it start
// and get its end; asp announced only ready calls and sage holds a
// round's calls until they are ready, so neither says anything of it.
func TestCutCall(t *testing.T) {
	evs := []coachd.Event{
		{Type: coachd.EventTurnStarted, SessionID: "sess_01", MessageID: "msg_01"},
		{Type: coachd.EventToolCallStarted, ToolUseID: "toolu_9", ToolName: "save_note"},
		{Type: coachd.EventToolResult, ToolUseID: "toolu_9", ToolName: "save_note", Result: "not run: cut", IsError: true, Cut: true},
		{Type: coachd.EventTurnEnded, SessionID: "sess_01", StopReason: coachd.TurnMaxTokens},
	}
	for dialect, want := range map[string]string{
		sse.Coachd: "event: function_result\ndata: {\"tool_use_id\":\"toolu_9\"",
		sse.AISDK:  `{"type":"tool-input-error","toolCallId":"toolu_9","toolName":"save_note","input":{},"providerExecuted":true,"errorText":"not run: cut"}`,
		sse.ASP:    "",
		sse.Sage:   "",
	} {
		out := string(writeAll(t, dialect, evs))
		if want != "" && !strings.Contains(out, want) {
			t.Errorf("%s: no %q in\n%s", dialect, want, out)
		}
		if want == "" && strings.Contains(out, "toolu_9") {
			t.Errorf("%s: speaks of a call it never announced:\n%s", dialect, out)
		}
	}
}

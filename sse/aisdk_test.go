package sse_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sse"
)

// aiChunks are the UI message stream chunks of AI SDK 6 with the keys
// each may carry (ai@6's uiMessageChunkSchema, copied by hand): every
// chunk is a z.strictObject, so a key not listed fails the client's
// validation and useChat ends the turn in error. A leading "!" marks a
// required key. AI SDK 5 (5.0.277) reads the same chunks.
var aiChunks = map[string][]string{
	"start":                 {"messageId", "messageMetadata"},
	"finish":                {"finishReason", "messageMetadata"},
	"start-step":            {},
	"finish-step":           {},
	"text-start":            {"!id", "providerMetadata"},
	"text-delta":            {"!id", "!delta", "providerMetadata"},
	"text-end":              {"!id", "providerMetadata"},
	"reasoning-start":       {"!id", "providerMetadata"},
	"reasoning-delta":       {"!id", "!delta", "providerMetadata"},
	"reasoning-end":         {"!id", "providerMetadata"},
	"tool-input-start":      {"!toolCallId", "!toolName", "providerExecuted", "providerMetadata", "dynamic", "title"},
	"tool-input-available":  {"!toolCallId", "!toolName", "input", "providerExecuted", "providerMetadata", "dynamic", "title"},
	"tool-output-available": {"!toolCallId", "output", "providerExecuted", "dynamic", "preliminary"},
	"tool-output-error":     {"!toolCallId", "!errorText", "providerExecuted", "dynamic"},
	"tool-input-error":      {"!toolCallId", "!toolName", "input", "!errorText", "providerExecuted", "providerMetadata", "dynamic"},
	"error":                 {"!errorText"},
	"data-*":                {"id", "!data", "transient"},
}

// aiFinishReasons are the finish reasons both AI SDK 5 and 6 take
// ("interrupted" is AI SDK 7's; "unknown" is 5's alone).
var aiFinishReasons = []string{"stop", "length", "content-filter", "tool-calls", "error", "other"}

// TestAISDKChunksFit runs turns ending every way (a reply with thinking,
// tools and a second round, a pause, an error, a stop, a cut) through the
// ai-sdk dialect and checks each chunk against the schema the AI SDK
// validates it with: the header says v1 of the protocol, which AI SDK 5, 6
// and 7 read alike.
func TestAISDKChunksFit(t *testing.T) {
	in := json.RawMessage(`{"q":"x"}`)
	var evs []coachd.Event
	for _, stop := range []string{coachd.TurnEndTurn, coachd.TurnMaxTokens, coachd.TurnAwaitingInput,
		coachd.TurnError, coachd.TurnAborted, coachd.TurnMaxRounds, coachd.TurnRefusal} {
		evs = append(evs,
			coachd.Event{Type: coachd.EventTurnStarted, SessionID: "sess_01", MessageID: "msg_01"},
			coachd.Event{Type: coachd.EventThinkingDelta, Text: "Hmm."},
			coachd.Event{Type: coachd.EventTextDelta, Text: "Looking."},
			coachd.Event{Type: coachd.EventToolCallStarted, ToolUseID: "toolu_1", ToolName: "search_notes"},
			coachd.Event{Type: coachd.EventToolCallReady, ToolUseID: "toolu_1", ToolName: "search_notes", Input: in},
			coachd.Event{Type: coachd.EventToolResult, ToolUseID: "toolu_1", ToolName: "search_notes", Result: `{"notes":[]}`},
			coachd.Event{Type: coachd.EventToolCallStarted, ToolUseID: "toolu_2", ToolName: "save_file"},
			coachd.Event{Type: coachd.EventToolCallReady, ToolUseID: "toolu_2", ToolName: "save_file", Input: in},
			coachd.Event{Type: coachd.EventToolResult, ToolUseID: "toolu_2", ToolName: "save_file", Result: "disk full", IsError: true},
			coachd.Event{Type: coachd.EventRoundBoundary},
			coachd.Event{Type: coachd.EventSessionChanged, Change: "mode_entered", Mode: "plan"},
			coachd.Event{Type: coachd.EventEventsMissed, Data: json.RawMessage(`{"last_event_id":"1:1","message":"reload"}`)},
			coachd.Event{Type: coachd.EventTextDelta, Text: "Done."},
		)
		if stop == coachd.TurnMaxTokens {
			// A call the reply was cut in: it ends without its input.
			evs = append(evs,
				coachd.Event{Type: coachd.EventToolCallStarted, ToolUseID: "toolu_5", ToolName: "save_note"},
				coachd.Event{Type: coachd.EventToolResult, ToolUseID: "toolu_5", ToolName: "save_note", Result: "not run", IsError: true, Cut: true})
		}
		if stop == coachd.TurnError {
			// A tool failing with no text, an error with no message: the
			// client still needs their errorText.
			evs = append(evs,
				coachd.Event{Type: coachd.EventToolResult, ToolUseID: "toolu_3", ToolName: "save_file", Input: in, IsError: true},
				coachd.Event{Type: coachd.EventError, Err: &coachd.Error{Code: coachd.EAPI}})
		}
		evs = append(evs, coachd.Event{Type: coachd.EventTurnEnded, SessionID: "sess_01", StopReason: stop})
	}
	out := string(writeAll(t, sse.AISDK, evs))
	for _, line := range strings.Split(out, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var chunk map[string]any
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		typ, _ := chunk["type"].(string)
		key := typ
		if strings.HasPrefix(typ, "data-") {
			key = "data-*"
		}
		allowed, ok := aiChunks[key]
		if !ok {
			t.Errorf("%s: the AI SDK has no chunk of type %q", data, typ)
			continue
		}
		for k := range chunk {
			if k != "type" && !slices.Contains(allowed, k) && !slices.Contains(allowed, "!"+k) {
				t.Errorf("%s: the AI SDK refuses the key %q of a %s chunk", data, k, typ)
			}
		}
		if r, ok := chunk["finishReason"].(string); ok && !slices.Contains(aiFinishReasons, r) {
			t.Errorf("%s: AI SDK 5 and 6 refuse the finish reason %q", data, r)
		}
		for _, k := range allowed {
			if name, req := strings.CutPrefix(k, "!"); req {
				if _, ok := chunk[name]; !ok {
					t.Errorf("%s: a %s chunk needs %q", data, typ, name)
				}
			}
		}
	}
}

// TestAISDKRefusalFinish: a turn the model refused finishes with
// "content-filter", the AI SDK's reason for withheld content (its
// openai-compatible provider reads OpenAI's content_filter so), not
// "other", which says nothing of why the reply is not there.
func TestAISDKRefusalFinish(t *testing.T) {
	out := string(writeAll(t, sse.AISDK, []coachd.Event{
		{Type: coachd.EventTurnStarted, SessionID: "sess_01", MessageID: "msg_01"},
		{Type: coachd.EventTextDelta, Text: "I can't help with that."},
		{Type: coachd.EventTurnEnded, SessionID: "sess_01", StopReason: coachd.TurnRefusal},
	}))
	if !strings.Contains(out, `{"type":"finish","finishReason":"content-filter"}`) {
		t.Errorf("a refusal's finish:\n%s", out)
	}
}

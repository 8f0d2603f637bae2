package anthropictest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/coachd/coachd"
)

// The events of a scripted reply as they were rendered before deltas were
// written by hand: every event a json.Marshal of a map. Kept as the oracle
// the fast rendering must match byte for byte.
func oldEvents(r Reply, id, model string, u coachd.Usage) []Event {
	var out []Event
	add := func(name string, v any) {
		data, err := json.Marshal(v)
		if err != nil {
			panic(fmt.Sprintf("anthropictest: %v", err)) // only our own maps get here
		}
		out = append(out, Event{Name: name, Data: data})
	}
	start := u
	start.OutputTokens = min(u.OutputTokens, 1)
	add("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": wireUsage(start)}})
	for i, b := range r.Blocks {
		add("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": b.startBlock()})
		if i == 0 {
			out = append(out, Event{Name: "ping", Data: []byte(`{"type": "ping"}`)})
		}
		for _, d := range oldDeltas(b) {
			add("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": d})
		}
		add("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	var seq any
	if r.StopSequence != "" {
		seq = r.StopSequence
	}
	add("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": r.stopReason(), "stop_sequence": seq}, "usage": wireUsage(u)})
	add("message_stop", map[string]any{"type": "message_stop"})
	return out
}

func oldDeltas(b BlockSpec) []map[string]any {
	var out []map[string]any
	switch b.Type {
	case coachd.BlockText:
		for _, c := range chunks(b.Text, b.Chunk) {
			out = append(out, map[string]any{"type": "text_delta", "text": c})
		}
	case coachd.BlockThinking:
		for _, c := range chunks(b.Text, b.Chunk) {
			out = append(out, map[string]any{"type": "thinking_delta", "thinking": c})
		}
		out = append(out, map[string]any{"type": "signature_delta", "signature": b.Signature})
	case coachd.BlockToolUse:
		out = append(out, map[string]any{"type": "input_json_delta", "partial_json": ""})
		prev := 0
		for _, at := range append(b.Splits, len(b.Input)) {
			if at <= prev || at > len(b.Input) {
				continue
			}
			out = append(out, map[string]any{"type": "input_json_delta", "partial_json": b.Input[prev:at]})
			prev = at
		}
	}
	return out
}

// TestEventsMatchMaps: scripted replies stream the bytes they did.
func TestEventsMatchMaps(t *testing.T) {
	u := coachd.Usage{InputTokens: 12, OutputTokens: 30, CacheReadInputTokens: 4096, CacheCreationInputTokens: 7}
	replies := []Reply{
		Text(strings.Repeat("word ", 20), len("word ")),
		Text("<b>&amp;</b> \u2028\u2029 \"quoted\" \\ \n\t\x01 \xff héllo 日本語", 3),
		Text("", 4),
		Blocks(Thinking("let me <think> about it, at length", "sig&1"), TextBlock("ok", 0)),
		Blocks(ToolUse("toolu_1", "save_note", `{"title":"a<b","n":1}`)),
		Blocks(ToolUse("", "save_note", `{"note_type":"insight","title":"Load test"}`)),
		Blocks(Redacted("xyz"), TextBlock("done", 2)).WithStop("stop_sequence"),
		{Blocks: []BlockSpec{{Type: coachd.BlockToolUse, ID: "t", Name: "n", Input: `{"a":[1,2,3]}`, Splits: []int{3, 3, 7, 99}}}, StopSequence: "END"},
		{Blocks: []BlockSpec{{Type: "server_tool_use", Raw: json.RawMessage(`{"type":"server_tool_use","id":"s"}`)}}},
		{Blocks: []BlockSpec{{Type: "mystery"}}},
	}
	for i, r := range replies {
		got, want := r.events("msg_1", "claude-x", u), oldEvents(r, "msg_1", "claude-x", u)
		if len(got) != len(want) {
			t.Fatalf("reply %d: %d events, want %d", i, len(got), len(want))
		}
		for j := range got {
			if got[j].Name != want[j].Name || !bytes.Equal(got[j].Data, want[j].Data) {
				t.Errorf("reply %d event %d: %s %s, want %s %s", i, j, got[j].Name, got[j].Data, want[j].Name, want[j].Data)
			}
		}
	}
}

// oldWriteEvent is writeEvent as it was, the oracle for the one-buffer
// version.
func oldWriteEvent(ev Event, pad int) []byte {
	var buf bytes.Buffer
	if ev.Name != "" {
		buf.WriteString("event: ")
		buf.WriteString(ev.Name)
		buf.WriteByte('\n')
	}
	data := ev.Data
	if pad > 0 && len(data) > 1 && data[len(data)-1] == '}' && !bytes.Contains(data, []byte("\n")) {
		data = append(append(bytes.Clone(data[:len(data)-1]), bytes.Repeat([]byte(" "), pad)...), '}')
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		buf.WriteString("data: ")
		buf.Write(line)
		buf.WriteByte('\n')
	}
	buf.WriteByte('\n')
	return buf.Bytes()
}

// FuzzWriteEvent: writeEvent writes what it wrote.
func FuzzWriteEvent(f *testing.F) {
	for _, d := range []string{`{"type":"ping"}`, "", "{\n}", "a\n\nb\n", "}", `{}`} {
		for _, pad := range []int{0, 3} {
			f.Add("content_block_delta", []byte(d), pad)
			f.Add("", []byte(d), pad)
		}
	}
	f.Fuzz(func(t *testing.T, name string, data []byte, pad int) {
		pad %= 16
		var got bytes.Buffer
		writeEvent(&got, Event{Name: name, Data: data}, pad)
		if want := oldWriteEvent(Event{Name: name, Data: data}, pad); !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("writeEvent(%q, %q, %d) = %q, want %q", name, data, pad, got.Bytes(), want)
		}
	})
}

func TestFakeID(t *testing.T) {
	for _, n := range []int{1, 9, 10, 99999, 100000, 999999, 1000000, 12345678} {
		if got, want := fakeID("req_fake_", n), fmt.Sprintf("req_fake_%06d", n); got != want {
			t.Errorf("fakeID(%d) = %q, want %q", n, got, want)
		}
	}
}

package anthropic

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go"
)

// TestDecodeStartShapes: message_start and content_block_start in the
// shapes the API sends are decoded by hand, every other shape is left to
// the SDK, and either way a whole stream around them comes out as the
// SDK's decoder makes it (events, message, error).
func TestDecodeStartShapes(t *testing.T) {
	const usage = `"usage":{"input_tokens":25,"cache_creation_input_tokens":3,"cache_read_input_tokens":7,"output_tokens":1}`
	msg := func(fields string) string {
		return `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x",` +
			`"content":[],"stop_reason":null,"stop_sequence":null` + fields + `}}`
	}
	starts := []struct {
		data string
		hand bool
	}{
		{msg("," + usage), true},
		{msg(""), true},
		{msg(`,"stop_details":null,"container":null,` + usage), true},
		{msg(`,"usage":{"input_tokens":472,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,` +
			`"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},"output_tokens":2,"service_tier":"standard"}`), true},
		{msg(`,"usage":{"input_tokens":1,"output_tokens":1,"service_tier":null,"server_tool_use":null,"cache_creation":null}`), true},
		{` { "message" : {"stop_sequence":null,"stop_reason":null,"content":[ ],"model":"m","role":"assistant",` +
			`"type":"message","id":"msg_2"}, "type" : "message_start" } `, true},
		// Left to the SDK: anything it might read differently.
		{msg("," + usage + `,"id":"msg_again"`), false},
		{strings.Replace(msg(""), `"msg_1"`, `"msg_\u0031"`, 1), false},
		{strings.Replace(msg(""), `"content":[]`, `"content":[{"type":"text","text":"hi"}]`, 1), false},
		{strings.Replace(msg(""), `"stop_reason":null`, `"stop_reason":"end_turn"`, 1), false},
		{strings.Replace(msg(""), `"role":"assistant"`, `"role":"user"`, 1), false},
		{strings.Replace(msg(""), `,"stop_sequence":null`, ``, 1), false},
		{msg(`,"usage":{"input_tokens":-1,"output_tokens":1}`), false},
		{msg(`,"usage":{"input_tokens":1.5,"output_tokens":1}`), false},
		{msg(`,"usage":{"input_tokens":1,"input_tokens":2}`), false},
		{msg(`,"usage":{"input_tokens":1,"server_tool_use":{"web_search_requests":1}}`), false},
		{msg(`,"usage":{"cache_creation":{"ephemeral_5m_input_tokens":1,"ephemeral_5m_input_tokens":1}}`), false},
		{msg(`,"extra":1`), false},
		{strings.Replace(msg(""), `"type":"message_start",`, `"type":"message_start","index":0,`, 1), false},

		{`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`, true},
		{`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`, true},
		{`{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"EqkE/+=="}}`, true},
		{`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}}`, true},
		{`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"add","input":{},"caller":{"type":"direct"}}  }`, true},
		{`{ "content_block" : { "input" : { } , "name":"n", "id":"toolu_1", "type":"tool_use" }, "index" : 0 , "type":"content_block_start"}`, true},
		{`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"a\n\u00e9"}}`, true},
		// Left to the SDK.
		{`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"n","input":{"a":1}}}`, false},
		{`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"n\u0041","input":{}}}`, false},
		{`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"","citations":[]}}`, false},
		{`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"","text":"x"}}`, false},
		{`{"type":"content_block_start","index":0,"content_block":{"text":""}}`, false},
		{`{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{},"caller":{"type":"direct","type":"x"}}}`, false},
		{`{"type":"content_block_start","content_block":{"type":"text","text":""}}`, false},
		{`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""},"delta":{"type":"text_delta","text":"x"}}`, false},
		{`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""},"message":{}}`, false},
		{`{"type":"message_start","index":0,"content_block":{"type":"text","text":""}}`, false},
	}
	const rest = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":5}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	const plainStart = "event: message_start\ndata: " +
		`{"type":"message_start","message":{"id":"msg_0","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null}}` + "\n\n"
	const textStart = "event: content_block_start\ndata: " + `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n"
	for i, c := range starts {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			var ev sdk.MessageStreamEventUnion
			r := &sseReader{}
			if got := r.decode([]byte(c.data), &ev); got != c.hand {
				t.Fatalf("decoded by hand: %v, want %v: %s", got, c.hand, c.data)
			}
			body := "event: message_start\ndata: " + c.data + "\n\n" + textStart + rest
			if strings.Contains(c.data, "content_block_start") {
				body = plainStart + "event: content_block_start\ndata: " + c.data + "\n\n" + rest
			}
			checkSameDecode(t, []byte(body))
		})
	}
}

// TestDecodeMessageStopWrites: at message_stop coachd's path writes again
// only the blocks that changed since their stop; the message comes out as
// the SDK's Accumulate makes it, which writes every block again: a block
// never stopped, a delta after a stop, an input the stop emptied.
func TestDecodeMessageStopWrites(t *testing.T) {
	ev := func(data string) string {
		var typ struct{ Type string }
		_ = json.Unmarshal([]byte(data), &typ)
		return "event: " + typ.Type + "\ndata: " + data + "\n\n"
	}
	start := ev(`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null}}`)
	end := func(reason string) string {
		return ev(`{"type":"message_delta","delta":{"stop_reason":"`+reason+`","stop_sequence":null},"usage":{"output_tokens":5}}`) +
			ev(`{"type":"message_stop"}`)
	}
	text := func(i int, s string) string {
		return ev(fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%q}}`, i, s))
	}
	input := func(i int, s string) string {
		return ev(fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%q}}`, i, s))
	}
	stop := func(i int) string { return ev(fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i)) }
	textStart := func(i int) string {
		return ev(fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"text","text":""}}`, i))
	}
	bodies := map[string]string{
		"never stopped":              start + textStart(0) + text(0, "Hi") + end("end_turn"),
		"delta after its stop":       start + textStart(0) + text(0, "Hi") + stop(0) + text(0, " again") + end("end_turn"),
		"second block never stopped": start + textStart(0) + text(0, "a") + stop(0) + textStart(1) + text(1, "b") + end("end_turn"),
		"tool input cut": start + ev(`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"n","input":{}}}`) +
			input(0, `{"a":`) + stop(0) + end("max_tokens"),
		"server tool input emptied": start +
			ev(`{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"q":"x"}}}`) +
			input(0, `,"bad`) + stop(0) + end("end_turn"),
		"server tool input grown": start +
			ev(`{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}`) +
			input(0, `{"q":"y"}`) + stop(0) + end("end_turn"),
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) { checkSameDecode(t, []byte(body)) })
	}
}

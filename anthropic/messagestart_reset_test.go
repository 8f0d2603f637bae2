package anthropic

import (
	"strings"
	"testing"
)

// TestBlockBeforeMessageStart: a block before message_start, which the
// API never sends (a broken proxy or a spliced stream might). The SDK's
// Accumulate folds it in and message_start then replaces the message;
// coachd's own path kept a flag per block (s.stale) across that reset and
// failed at message_stop (a review found it). Both decoders must make the
// same of it.
func TestBlockBeforeMessageStart(t *testing.T) {
	evs := []string{
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"early"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}`,
		`{"type":"message_stop"}`,
	}
	var sb strings.Builder
	for _, e := range evs {
		name := e[9 : strings.Index(e[9:], `"`)+9]
		sb.WriteString("event: " + name + "\ndata: " + e + "\n\n")
	}
	checkSameDecode(t, []byte(sb.String()))
}

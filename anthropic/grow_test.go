package anthropic_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestDeltasGathered: text and thinking deltas, which the adapter gathers
// itself instead of through the SDK's Accumulate, end up whole in their
// own blocks, beside a tool_use between them, in a complete reply and in
// one cut mid-thinking.
func TestDeltasGathered(t *testing.T) {
	think := strings.Repeat("let me think about <this> & that ", 5)
	text := strings.Repeat("héllo wörld ", 9)
	reply := anthropictest.Blocks(
		anthropictest.Thinking(think, "sig_1"),
		anthropictest.TextBlock(text, 7),
		anthropictest.ToolUse("toolu_1", "save_note", `{"text":"x"}`, 4),
		anthropictest.TextBlock("after", 2),
	)
	t.Run("OK", func(t *testing.T) {
		srv := MustServer(t)
		m := newModel(srv, anthropic.Config{})
		srv.Enqueue(reply)
		evs, resp, err := drain(m.Stream(context.Background(), hello()))
		if err != nil {
			t.Fatal(err)
		}
		var streamed strings.Builder
		for _, ev := range evs {
			if ev.Type == coachd.ModelTextDelta {
				streamed.WriteString(ev.Text)
			}
		}
		if got, want := streamed.String(), text+"after"; got != want {
			t.Errorf("streamed %q, want %q", got, want)
		}
		if len(resp.Blocks) != 4 {
			t.Fatalf("blocks = %+v", resp.Blocks)
		}
		b := resp.Blocks
		if b[0].Type != coachd.BlockThinking || b[0].Thinking != think || b[0].Signature != "sig_1" {
			t.Errorf("thinking block = %+v", b[0])
		}
		if b[1].Type != coachd.BlockText || b[1].Text != text {
			t.Errorf("text block = %+v", b[1])
		}
		if b[2].Type != coachd.BlockToolUse || string(b[2].Input) != `{"text":"x"}` {
			t.Errorf("tool_use block = %+v", b[2])
		}
		if b[3].Text != "after" {
			t.Errorf("last block = %+v", b[3])
		}
	})
	t.Run("CutMidThinking", func(t *testing.T) {
		srv := MustServer(t)
		m := newModel(srv, anthropic.Config{})
		// message_start, content_block_start, then three thinking deltas.
		srv.Enqueue(reply.DropAfter(5))
		_, resp, err := drain(m.Stream(context.Background(), hello()))
		if err == nil {
			t.Fatal("no error for a dropped stream")
		}
		if len(resp.Blocks) != 1 || resp.Blocks[0].Type != coachd.BlockThinking {
			t.Fatalf("blocks = %+v", resp.Blocks)
		}
		if got := resp.Blocks[0].Thinking; got == "" || !strings.HasPrefix(think, got) {
			t.Errorf("partial thinking %q is not a prefix of the streamed one", got)
		}
		raw, _ := json.Marshal(resp.Blocks[0])
		if !json.Valid(raw) {
			t.Errorf("partial block does not encode: %s", raw)
		}
	})
}

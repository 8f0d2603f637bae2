package agent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/coachd/coachd"
)

func msg(role coachd.Role, blocks ...coachd.Block) *coachd.Message {
	return &coachd.Message{Role: role, Blocks: blocks}
}

func toolUse(id, name, input string) coachd.Block {
	return coachd.Block{Type: coachd.BlockToolUse, ID: id, Name: name, Input: json.RawMessage(input)}
}

func mustJSON(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// assertValid checks the rules the Messages API enforces on history.
func assertValid(t *testing.T, h []coachd.ModelMessage) {
	t.Helper()
	if len(h) == 0 || h[0].Role != coachd.RoleUser {
		t.Fatalf("history must start with a user message: %s", mustJSON(t, h))
	}
	for i, m := range h {
		if i > 0 && h[i-1].Role == m.Role {
			t.Fatalf("messages %d and %d share role %s", i-1, i, m.Role)
		}
		if len(m.Blocks) == 0 {
			t.Fatalf("message %d is empty", i)
		}
		var uses []string
		for _, b := range m.Blocks {
			if b.Type == coachd.BlockToolUse {
				uses = append(uses, b.ID)
			}
		}
		if len(uses) == 0 {
			continue
		}
		if i+1 >= len(h) {
			t.Fatalf("tool_use in the last message is unanswered")
		}
		next := h[i+1].Blocks
		if len(next) < len(uses) {
			t.Fatalf("message %d answers %d of %d tool uses", i+1, len(next), len(uses))
		}
		for j, id := range uses {
			if next[j].Type != coachd.BlockToolResult || next[j].ToolUseID != id {
				t.Fatalf("message %d block %d: want tool_result for %s first, got %s", i+1, j, id, mustJSON(t, next[j]))
			}
		}
	}
}

func TestHistory(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		in := []*coachd.Message{
			msg(coachd.RoleUser, coachd.TextBlock("hi")),
			msg(coachd.RoleAssistant, coachd.TextBlock("let me look"), toolUse("t1", "list_notes", `{}`)),
			msg(coachd.RoleUser, coachd.ToolResultBlock("t1", "[]", false)),
			msg(coachd.RoleAssistant, coachd.TextBlock("nothing yet")),
			msg(coachd.RoleUser, coachd.TextBlock("ok")),
		}
		h := History(in, nil)
		assertValid(t, h)
		if got, want := len(h), 5; got != want {
			t.Fatalf("got %d messages, want %d", got, want)
		}
	})
	t.Run("InterruptedRound", func(t *testing.T) {
		// A crash after the assistant's tool_use was stored, then a new turn.
		in := []*coachd.Message{
			msg(coachd.RoleUser, coachd.TextBlock("hi")),
			msg(coachd.RoleAssistant, toolUse("t1", "a", `{}`), toolUse("t2", "b", `{}`)),
			msg(coachd.RoleUser, coachd.TextBlock("are you there?")),
		}
		h := History(in, nil)
		assertValid(t, h)
		last := h[2].Blocks
		if !last[0].IsError || !strings.HasPrefix(last[0].ResultText(), "interrupted") || last[2].Text != "are you there?" {
			t.Fatalf("got %s", mustJSON(t, last))
		}
	})
	t.Run("SupersededPartial", func(t *testing.T) {
		// A reply that broke off, run again (RetryPartial): the model
		// never sees the broken text; a partial a user message follows
		// (a stopped reply) stays.
		broken := msg(coachd.RoleAssistant, coachd.TextBlock("Start at the airport because"))
		broken.Partial = true
		stopped := msg(coachd.RoleAssistant, coachd.TextBlock("Once upon"))
		stopped.Partial = true
		h := History([]*coachd.Message{
			msg(coachd.RoleUser, coachd.TextBlock("plan my night")),
			broken,
			msg(coachd.RoleAssistant, coachd.TextBlock("Start at the airport.")),
			msg(coachd.RoleUser, coachd.TextBlock("a story")),
			stopped,
			msg(coachd.RoleUser, coachd.TextBlock("shorter")),
		}, nil)
		assertValid(t, h)
		if got := mustJSON(t, h); len(h) != 5 || strings.Contains(got, "because") || !strings.Contains(got, "Once upon") {
			t.Fatalf("got %s", got)
		}
	})
	t.Run("TrailingToolUse", func(t *testing.T) {
		h := History([]*coachd.Message{
			msg(coachd.RoleUser, coachd.TextBlock("hi")),
			msg(coachd.RoleAssistant, toolUse("t1", "a", `{}`)),
		}, nil)
		assertValid(t, h)
	})
	t.Run("OrphanResultsAndEmptyBlocks", func(t *testing.T) {
		h := History([]*coachd.Message{
			msg(coachd.RoleAssistant, coachd.TextBlock("leading assistant is dropped")),
			msg(coachd.RoleUser, coachd.ToolResultBlock("nope", "x", false), coachd.TextBlock("hi")),
			msg(coachd.RoleAssistant, coachd.TextBlock(""), coachd.Block{Type: coachd.BlockThinking, Thinking: "cut"}),
			msg(coachd.RoleUser, coachd.TextBlock("again")),
		}, nil)
		assertValid(t, h)
		if len(h) != 1 || len(h[0].Blocks) != 2 || h[0].Blocks[0].Text != "hi" {
			t.Fatalf("got %s", mustJSON(t, h))
		}
	})
	t.Run("ResultsReordered", func(t *testing.T) {
		h := History([]*coachd.Message{
			msg(coachd.RoleUser, coachd.TextBlock("hi")),
			msg(coachd.RoleAssistant, toolUse("t1", "a", `{}`), toolUse("t2", "b", `{}`)),
			msg(coachd.RoleUser, coachd.TextBlock("text first"), coachd.ToolResultBlock("t2", "2", false), coachd.ToolResultBlock("t1", "1", false)),
		}, nil)
		assertValid(t, h)
	})
	t.Run("ResultsInOrderKept", func(t *testing.T) {
		// A round as stored: one result per call in call order is sent as
		// it is, without a copy; one out of order is not.
		stored := msg(coachd.RoleUser, coachd.ToolResultBlock("t1", "1", false), coachd.ToolResultBlock("t2", "2", true))
		h := History([]*coachd.Message{
			msg(coachd.RoleUser, coachd.TextBlock("hi")),
			msg(coachd.RoleAssistant, toolUse("t1", "a", `{}`), toolUse("t2", "b", `{}`)),
			stored,
		}, nil)
		assertValid(t, h)
		if got := h[2].Blocks; len(got) != 2 || &got[0] != &stored.Blocks[0] {
			t.Fatalf("in-order results copied: %s", mustJSON(t, got))
		}
		swapped := msg(coachd.RoleUser, stored.Blocks[1], stored.Blocks[0])
		h = History([]*coachd.Message{
			msg(coachd.RoleUser, coachd.TextBlock("hi")),
			msg(coachd.RoleAssistant, toolUse("t1", "a", `{}`), toolUse("t2", "b", `{}`)),
			swapped,
		}, nil)
		assertValid(t, h)
		if got := h[2].Blocks; got[0].ToolUseID != "t1" || !got[1].IsError || swapped.Blocks[0].ToolUseID != "t2" {
			t.Fatalf("swapped results: sent %s, stored now %s", mustJSON(t, got), mustJSON(t, swapped.Blocks))
		}
	})
	t.Run("ResendTruncates", func(t *testing.T) {
		stored := toolUse("t1", "save_file", `{"file_type":"overview","content":"`+strings.Repeat("x", 5000)+`"}`)
		in := []*coachd.Message{
			msg(coachd.RoleUser, coachd.TextBlock("hi")),
			msg(coachd.RoleAssistant, stored),
			msg(coachd.RoleUser, coachd.ToolResultBlock("t1", "ok", false)),
		}
		h := History(in, map[string][]string{"save_file": {"content"}})
		var got map[string]string
		if err := json.Unmarshal(h[1].Blocks[0].Input, &got); err != nil {
			t.Fatal(err)
		}
		if got["content"] != "[saved: 5000 chars]" || got["file_type"] != "overview" {
			t.Fatalf("got %v", got)
		}
		if len(in[1].Blocks[0].Input) < 5000 {
			t.Fatal("stored message was changed")
		}
	})
}

func FuzzHistory(f *testing.F) {
	f.Add(`[{"role":"user","content_blocks":[{"type":"text","text":"hi"}]},{"role":"assistant","content_blocks":[{"type":"tool_use","id":"a","name":"x","input":{}}]}]`)
	f.Add(`[{"role":"assistant","content_blocks":[{"type":"text","text":""}]},{"role":"user","content_blocks":[{"type":"tool_result","tool_use_id":"a","content":"x"}]}]`)
	f.Fuzz(func(t *testing.T, s string) {
		var msgs []*coachd.Message
		if json.Unmarshal([]byte(s), &msgs) != nil {
			return
		}
		for _, m := range msgs {
			if m == nil || (m.Role != coachd.RoleUser && m.Role != coachd.RoleAssistant) {
				return
			}
		}
		h := History(msgs, nil)
		if len(h) > 0 {
			assertValid(t, h)
		}
	})
}

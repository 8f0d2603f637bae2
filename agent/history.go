package agent

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/coachd/coachd"
)

// InterruptedText is the content of the synthetic tool_result stored or sent
// for a tool_use whose turn died before it was answered.
const InterruptedText = "interrupted: the turn ended before this tool returned; nothing is known about its effect"

// History turns stored messages into a valid Messages API history:
//
//   - blocks a role cannot send, text blocks of whitespace only (which the
//     API refuses; a reply of action tags alone leaves one), thinking
//     without a signature (cut mid-stream) and messages left with no
//     blocks are dropped;
//   - a partial reply (a stream that broke) another assistant message
//     follows (after the results of the calls it was cut in, if any) was
//     run again (TurnRequest.RetryPartial) and is left out, with them;
//   - consecutive messages of one role are merged;
//   - it starts with a user message;
//   - every tool_use is answered by a tool_result in the next user message
//     (synthetic "interrupted" errors fill gaps; results placed first), and
//     tool_results that answer nothing are dropped;
//   - only the newest attachments are re-sent (limitAttachments);
//   - inputs of tools with a re-send policy are shortened (truncate maps a
//     tool name to the input fields to replace).
//
// The stored messages are not changed.
func History(msgs []*coachd.Message, truncate map[string][]string) []coachd.ModelMessage {
	out := make([]coachd.ModelMessage, 0, len(msgs))
	skip := 0
	for i, m := range msgs {
		if skip > 0 {
			skip--
			continue
		}
		if m.Partial && m.Role == coachd.RoleAssistant {
			n := 1 // the broken reply, and the results of the calls it was cut in
			if i+1 < len(msgs) && msgs[i+1].Role == coachd.RoleUser && msgs[i+1].OnlyBlocks(coachd.BlockToolResult) {
				n = 2
			}
			if i+n < len(msgs) && msgs[i+n].Role == coachd.RoleAssistant {
				skip = n - 1
				continue
			}
		}
		blocks := cleanBlocks(m.Role, m.Blocks)
		if len(blocks) == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Role == m.Role {
			out[n-1].Blocks = append(out[n-1].Blocks, blocks...)
			continue
		}
		if len(out) == 0 && m.Role != coachd.RoleUser {
			continue
		}
		out = append(out, coachd.ModelMessage{Role: m.Role, Blocks: blocks})
	}
	out = pairToolResults(out)
	limitAttachments(out)
	for i := range out {
		if out[i].Role == coachd.RoleAssistant {
			out[i].Blocks = shorten(out[i].Blocks, truncate)
		}
	}
	return out
}

// brokenReply is how many of h's last messages are a reply that broke
// off (a stream cut, a stop): its partial assistant message (1) and, when
// it was cut in tool calls, the message of their "interrupted" results
// after it (2). 0 when h does not end with one.
func brokenReply(h []*coachd.Message) int {
	n := len(h)
	switch {
	case n > 1 && h[n-1].Role == coachd.RoleAssistant && h[n-1].Partial:
		return 1
	case n > 2 && h[n-2].Role == coachd.RoleAssistant && h[n-2].Partial &&
		h[n-1].Role == coachd.RoleUser && h[n-1].OnlyBlocks(coachd.BlockToolResult):
		return 2
	}
	return 0
}

// cleanBlocks returns the blocks of in a role can send. When it keeps
// them all (the usual case) it returns in itself, clipped so that an
// append (merging messages) copies instead of writing into the stored
// message's array.
func cleanBlocks(role coachd.Role, in []coachd.Block) []coachd.Block {
	for i := range in {
		if !sendable(role, &in[i]) {
			out := make([]coachd.Block, 0, len(in)-1)
			out = append(out, in[:i]...)
			for j := i + 1; j < len(in); j++ {
				if sendable(role, &in[j]) {
					out = append(out, in[j])
				}
			}
			return out
		}
	}
	return in[:len(in):len(in)]
}

func sendable(role coachd.Role, b *coachd.Block) bool {
	switch {
	case role == coachd.RoleUser && b.Type == coachd.BlockToolUse:
	case role == coachd.RoleAssistant && b.Type == coachd.BlockToolResult:
	case b.Type == coachd.BlockText && strings.TrimSpace(b.Text) == "":
	case b.Type == coachd.BlockThinking && b.Signature == "":
	default:
		return true
	}
	return false
}

// pairToolResults makes every assistant tool_use answered in the next user
// message and drops orphan tool_results.
func pairToolResults(msgs []coachd.ModelMessage) []coachd.ModelMessage {
	out := make([]coachd.ModelMessage, 0, len(msgs)+1)
	var open []string // tool_use ids of the previous assistant message
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		if m.Role == coachd.RoleAssistant {
			if len(open) > 0 {
				// Two assistant messages cannot be adjacent after merging,
				// so open is always answered by the user message between.
				open = nil
			}
			out = append(out, m)
			for _, b := range m.Blocks {
				if b.Type == coachd.BlockToolUse {
					open = append(open, b.ID)
				}
			}
			if len(open) > 0 && (i+1 == len(msgs) || msgs[i+1].Role != coachd.RoleUser) {
				out = append(out, coachd.ModelMessage{Role: coachd.RoleUser, Blocks: interrupted(open)})
				open = nil
			}
			continue
		}
		out = append(out, coachd.ModelMessage{Role: m.Role, Blocks: answer(m.Blocks, open)})
		open = nil
	}
	return out
}

// answer orders a user message's blocks: results for the open tool_use ids
// first, in call order (synthetic ones where missing), then everything else
// but stray tool_results.
func answer(blocks []coachd.Block, open []string) []coachd.Block {
	if len(open) == 0 && len(blocks) > 0 && !slices.ContainsFunc(blocks, isToolResult) {
		return blocks // nothing to answer, nothing stray: as it is
	}
	if answered(blocks, open) {
		return blocks // a result for each call, in call order: as it is
	}
	results := map[string]coachd.Block{}
	var rest []coachd.Block
	for _, b := range blocks {
		if b.Type == coachd.BlockToolResult {
			if _, dup := results[b.ToolUseID]; !dup {
				results[b.ToolUseID] = b
			}
			continue
		}
		rest = append(rest, b)
	}
	out := make([]coachd.Block, 0, len(open)+len(rest))
	for _, id := range open {
		if r, ok := results[id]; ok {
			out = append(out, r)
		} else {
			out = append(out, coachd.ToolResultBlock(id, InterruptedText, true))
		}
	}
	out = append(out, rest...)
	if len(out) == 0 {
		out = append(out, coachd.TextBlock("(no content)"))
	}
	return out
}

func isToolResult(b coachd.Block) bool { return b.Type == coachd.BlockToolResult }

// answered reports whether blocks are exactly one result for each open
// call, in call order: what a tool round stores.
func answered(blocks []coachd.Block, open []string) bool {
	if len(open) == 0 || len(blocks) != len(open) {
		return false
	}
	for i, b := range blocks {
		if b.Type != coachd.BlockToolResult || b.ToolUseID != open[i] {
			return false
		}
	}
	return true
}

func interrupted(ids []string) []coachd.Block {
	out := make([]coachd.Block, len(ids))
	for i, id := range ids {
		out[i] = coachd.ToolResultBlock(id, InterruptedText, true)
	}
	return out
}

// shorten replaces the truncated input fields of tool_use blocks with
// "[saved: N chars]".
func shorten(blocks []coachd.Block, truncate map[string][]string) []coachd.Block {
	if len(truncate) == 0 {
		return blocks
	}
	var out []coachd.Block
	for i, b := range blocks {
		fields := truncate[b.Name]
		if b.Type != coachd.BlockToolUse || len(fields) == 0 {
			continue
		}
		var in map[string]json.RawMessage
		if json.Unmarshal(b.Input, &in) != nil {
			continue
		}
		changed := false
		for _, f := range fields {
			var s string
			if raw, ok := in[f]; ok && json.Unmarshal(raw, &s) == nil {
				in[f], _ = json.Marshal(fmt.Sprintf("[saved: %d chars]", len([]rune(s))))
				changed = true
			}
		}
		if !changed {
			continue
		}
		if out == nil {
			out = append([]coachd.Block(nil), blocks...)
		}
		b.Input, _ = json.Marshal(in)
		out[i] = b
	}
	if out == nil {
		return blocks
	}
	return out
}

// UnansweredToolUses returns the ids of tool_use blocks in the last stored
// message when it is an assistant message: a turn that died mid-round.
func UnansweredToolUses(msgs []*coachd.Message) []string {
	if len(msgs) == 0 || msgs[len(msgs)-1].Role != coachd.RoleAssistant {
		return nil
	}
	var ids []string
	for _, b := range msgs[len(msgs)-1].Blocks {
		if b.Type == coachd.BlockToolUse {
			ids = append(ids, b.ID)
		}
	}
	return ids
}

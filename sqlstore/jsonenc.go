package sqlstore

import (
	"strconv"

	"github.com/coachd/coachd"
)

// appendEvent appends ev as json.Marshal(logged(ev)) writes it, without
// reflection: every event of a turn is logged, a tool turn's eight or so
// that are not text deltas among them, and their reflective encoding was
// 1.3 % of coachd's CPU under load (BENCHMARKS.md). It reports false,
// appending nothing, for what it leaves to encoding/json: an error, data,
// an input that is not valid JSON, a cost that is not a number JSON can
// carry (which encoding/json refuses).
// TestAppendEventFields sets each field of coachd.Event and TurnUsage in
// turn, and FuzzAppendEvent compares the two encodings.
func appendEvent(dst []byte, ev coachd.Event) ([]byte, bool) {
	if ev.Err != nil || len(ev.Data) > 0 || len(ev.Input) > 0 && !coachd.ValidJSON(ev.Input) || !ev.ExpiresAt.IsZero() {
		return dst, false
	}
	start := len(dst)
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendInt(dst, ev.Seq, 10)
	dst = append(dst, `,"type":`...)
	dst = coachd.AppendJSONString(dst, string(ev.Type), true)
	dst = appendInt(dst, `,"turn":`, ev.Turn)
	dst = appendString(dst, `,"session_id":`, ev.SessionID)
	dst = appendString(dst, `,"message_id":`, ev.MessageID)
	dst = appendString(dst, `,"continues":`, ev.Continues)
	dst = appendString(dst, `,"text":`, ev.Text)
	dst = appendString(dst, `,"tool_use_id":`, ev.ToolUseID)
	dst = appendString(dst, `,"tool_name":`, ev.ToolName)
	if len(ev.Input) > 0 {
		dst = append(dst, `,"input":`...)
		dst = coachd.AppendCleanJSON(dst, ev.Input)
	}
	dst = appendString(dst, `,"result":`, ev.Result)
	if ev.IsError {
		dst = append(dst, `,"is_error":true`...)
	}
	dst = appendString(dst, `,"reason":`, ev.Reason)
	if ev.Denied {
		dst = append(dst, `,"denied":true`...)
	}
	if ev.Cut {
		dst = append(dst, `,"cut":true`...)
	}
	dst = appendString(dst, `,"change":`, ev.Change)
	dst = appendString(dst, `,"mode":`, ev.Mode)
	if u := ev.Usage; u != nil {
		dst = appendUsage(append(dst, `,"usage":`...), &u.Usage)
		dst = append(dst[:len(dst)-1], `,"tokens_used":`...) // the embedded Usage's fields come first
		dst = strconv.AppendInt(dst, u.TokensUsed, 10)
		if u.BudgetRemaining != nil {
			dst = append(dst, `,"budget_remaining":`...)
			dst = strconv.AppendInt(dst, *u.BudgetRemaining, 10)
		}
		dst = appendInt(dst, `,"billed":`, u.Billed)
		dst = appendString(dst, `,"budget_unit":`, string(u.Unit))
		if u.CostUSD != 0 {
			var ok bool
			if dst, ok = coachd.AppendJSONFloat(append(dst, `,"cost_usd":`...), u.CostUSD); !ok {
				return dst[:start], false
			}
		}
		dst = append(dst, '}')
	}
	dst = appendString(dst, `,"stop_reason":`, ev.StopReason)
	dst = appendInt(dst, `,"latency_ms":`, ev.LatencyMS)
	return append(dst, '}'), true
}

// appendString appends key and s, unless s is empty (omitempty).
func appendString(dst []byte, key, s string) []byte {
	if s == "" {
		return dst
	}
	return coachd.AppendJSONString(append(dst, key...), s, true)
}

// appendInt appends key and n, unless n is 0 (omitempty).
func appendInt(dst []byte, key string, n int64) []byte {
	if n == 0 {
		return dst
	}
	return strconv.AppendInt(append(dst, key...), n, 10)
}

// appendBlocks appends blocks as json.Marshal(blocks) writes them, without
// its second pass over each block's JSON (encoding/json compacts what a
// MarshalJSON returns, and checks it), when every block is as
// json.Marshal writes it (coachd.Block.AsIs), as stored and streamed
// blocks nearly always are; it reports false, appending nothing,
// otherwise. TestAppendBlocks and FuzzAppendBlocks compare the two.
func appendBlocks(dst []byte, blocks []coachd.Block) ([]byte, bool) {
	for i := range blocks {
		if !blocks[i].AsIs() {
			return dst, false
		}
	}
	if len(blocks) == 0 {
		return dst, false
	}
	start := len(dst)
	for i := range blocks {
		dst = append(dst, ',')
		dst, _ = blocks[i].AppendJSON(dst)
	}
	dst[start] = '[' // the first ',' opens the array
	return append(dst, ']'), true
}

// blocksSize is about the length of blocks' JSON when little needs
// escaping: appendBlocks's buffer, grown at most once.
func blocksSize(blocks []coachd.Block) int {
	n := 2
	for i := range blocks {
		b := &blocks[i]
		n += 64 + len(b.Type) + len(b.Text) + len(b.Thinking) + len(b.Signature) + len(b.Data) + len(b.ID) + len(b.Name) +
			len(b.Input) + len(b.ToolUseID) + len(b.Content) + len(b.Source)
		for k, v := range b.Extra {
			n += len(k) + len(v) + 4
		}
	}
	return n + n/16
}

// appendUsage appends u as json.Marshal(u) writes it. TestAppendUsage
// sets each field of coachd.Usage in turn.
func appendUsage(dst []byte, u *coachd.Usage) []byte {
	dst = append(dst, `{"input_tokens":`...)
	dst = strconv.AppendInt(dst, u.InputTokens, 10)
	dst = append(dst, `,"output_tokens":`...)
	dst = strconv.AppendInt(dst, u.OutputTokens, 10)
	dst = appendInt(dst, `,"cache_read_input_tokens":`, u.CacheReadInputTokens)
	dst = appendInt(dst, `,"cache_creation_input_tokens":`, u.CacheCreationInputTokens)
	return append(dst, '}')
}

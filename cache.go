package coachd

import (
	"encoding/json"
	"maps"
)

// MaxCacheBreakpoints is the Messages API's limit of cache_control blocks
// in one request; a request with more is refused (400).
const MaxCacheBreakpoints = 4

// cacheControl is the marker of a 5-minute prompt-cache breakpoint.
var cacheControl = json.RawMessage(`{"type":"ephemeral"}`)

// CacheMarks places a request's prompt-cache breakpoints. The API caches
// the prefix that ends at a marked block, in the order tools → system →
// messages, and a byte changed anywhere invalidates every entry after it,
// so coachd lays a request out from the most to the least stable part
// (see agent's systemPrompt) and marks, in this order of priority:
//
//  1. Newest: the last block of the last message before its TailBlocks
//     (the turn's context: time, recent files, a due check-in). It writes
//     the entry the next round and the next turn read; the tail after it
//     is billed as plain input, and changing it never invalidates the
//     history.
//  2. Stable prefix: the first system block (the agent's prompt and skill
//     summaries) — with the tools before it, the same for every turn of
//     every session of the agent. Without system blocks, the last tool.
//  3. Previous round: the last block of the third message from the end —
//     where the previous request of the session ended (a round adds an
//     assistant message and a user message), so its entry is hit exactly
//     even when a round adds more than the 20 blocks the API looks back
//     from a breakpoint.
//  4. Session context: the last system block when there are two or more
//     (context sections that change only when the user's files, notes or
//     session mode do).
//
// With NoHistoryCache only 2 and 4 are placed.
//
// Breakpoints the caller set already count against the API's limit of
// MaxCacheBreakpoints; a block that cannot carry one (thinking, empty
// text) passes the mark to the block before it in the same message. The
// returned request shares nothing it marks with req (blocks with marks
// get their own Extra); lastTool asks the adapter to mark the last tool.
func CacheMarks(req *ModelRequest) (out *ModelRequest, lastTool bool) {
	r := *req
	r.System = append([]Block(nil), req.System...)
	r.Messages = append([]ModelMessage(nil), req.Messages...)
	free := MaxCacheBreakpoints - countMarks(req)
	mark := func(blocks []Block, i int) bool {
		if free <= 0 {
			return false
		}
		for ; i >= 0; i-- {
			if markable(blocks[i]) {
				b := blocks[i]
				b.Extra = maps.Clone(b.Extra)
				if b.Extra == nil {
					b.Extra = map[string]json.RawMessage{}
				}
				b.Extra["cache_control"] = cacheControl
				blocks[i] = b
				free--
				return true
			}
			if blocks[i].Extra["cache_control"] != nil {
				return false // already marked there
			}
		}
		return false
	}
	msg := func(i, end int) {
		if i < 0 || i >= len(r.Messages) || req.NoHistoryCache {
			return
		}
		m := r.Messages[i]
		m.Blocks = append([]Block(nil), m.Blocks...)
		r.Messages[i] = m
		mark(m.Blocks, min(end, len(m.Blocks))-1)
	}
	n := len(r.Messages)
	if n > 0 {
		msg(n-1, len(r.Messages[n-1].Blocks)-max(req.TailBlocks, 0))
	}
	switch {
	case len(r.System) > 0:
		mark(r.System, 0)
	case len(r.Tools) > 0 && free > 0:
		lastTool = true
		free--
	}
	if n >= 3 {
		msg(n-3, len(r.Messages[n-3].Blocks))
	}
	if len(r.System) > 1 {
		mark(r.System, len(r.System)-1)
	}
	return &r, lastTool
}

// markable reports whether the API accepts cache_control on b: not on
// thinking blocks, not on empty text, not twice.
func markable(b Block) bool {
	switch {
	case b.Extra["cache_control"] != nil:
		return false
	case b.Type == BlockThinking || b.Type == BlockRedactedThinking:
		return false
	case b.Type == BlockText && b.Text == "":
		return false
	}
	return true
}

// countMarks counts the cache_control markers a request carries already.
func countMarks(req *ModelRequest) int {
	n := 0
	for _, b := range req.System {
		if b.Extra["cache_control"] != nil {
			n++
		}
	}
	for _, m := range req.Messages {
		for _, b := range m.Blocks {
			if b.Extra["cache_control"] != nil {
				n++
			}
		}
	}
	return n
}

package anthropic

import (
	"bytes"

	"github.com/coachd/coachd"

	sdk "github.com/anthropics/anthropic-sdk-go"
)

// The two events that open a message and its blocks, decoded by hand in
// their plain shapes. The SDK decodes each by reflection into the whole
// event union, and Accumulate decodes a block's start a second time into
// the message: under load that was about a third of the stream's
// decoding.

// msgStart is what a message_start in its plain shape carries:
//
//	{"type":"message_start","message":{"id":"…","type":"message","role":"assistant","model":"…",
//	 "content":[],"stop_reason":null,"stop_sequence":null[,"stop_details":null][,"container":null]
//	 [,"usage":{"input_tokens":N,"output_tokens":N[,"cache_creation_input_tokens":N]
//	           [,"cache_read_input_tokens":N][,"service_tier":"…"|null][,"server_tool_use":null]
//	           [,"cache_creation":null|{"ephemeral_5m_input_tokens":N,"ephemeral_1h_input_tokens":N}]}]}}
//
// in any key order. Only what coachd reads of the message is kept: its id,
// its model and the four counts (the tier and the cache split are checked
// and dropped). Any other field or value (an escaped id, content already
// in the message, a stop reason) is left to the SDK.
type msgStart struct {
	seen      bool
	fields    fieldSet
	id, model []byte
	tokens    [4]int64 // in usageKeys' order
}

// msgStartNeeds: the message's id, type, role, model, content,
// stop_reason and stop_sequence (the first seven fields read knows).
const msgStartNeeds = 1<<7 - 1

// read reads the message object.
func (ms *msgStart) read(l *lexer) bool {
	ms.seen = true
	ok := l.object(func(key []byte) bool {
		var esc bool
		var v []byte
		switch string(key) {
		case "id":
			return ms.fields.once(0) && l.str(&ms.id, &esc) && !esc
		case "type":
			return ms.fields.once(1) && l.str(&v, &esc) && string(v) == "message"
		case "role":
			return ms.fields.once(2) && l.str(&v, &esc) && string(v) == "assistant"
		case "model":
			return ms.fields.once(3) && l.str(&ms.model, &esc) && !esc
		case "content":
			return ms.fields.once(4) && l.eat('[') && l.eat(']')
		case "stop_reason":
			return ms.fields.once(5) && l.null()
		case "stop_sequence":
			return ms.fields.once(6) && l.null()
		case "usage":
			var uf fieldSet
			return ms.fields.once(7) && l.object(func(key []byte) bool { return ms.usageField(l, &uf, key) })
		case "stop_details":
			return ms.fields.once(8) && l.null()
		case "container":
			return ms.fields.once(9) && l.null()
		}
		return false
	})
	return ok && ms.fields&msgStartNeeds == msgStartNeeds
}

// usageField reads the message's usage member key.
func (ms *msgStart) usageField(l *lexer, uf *fieldSet, key []byte) bool {
	for i, k := range usageKeys {
		if string(key) == k {
			return uf.once(uint(i)) && l.index(&ms.tokens[i])
		}
	}
	var esc bool
	var v []byte
	switch string(key) {
	case "service_tier":
		return uf.once(4) && (l.null() || l.str(&v, &esc) && !esc)
	case "server_tool_use":
		return uf.once(5) && l.null()
	case "cache_creation":
		if !uf.once(6) {
			return false
		}
		if l.null() {
			return true
		}
		var cf fieldSet
		return l.object(func(key []byte) bool {
			var n int64
			switch string(key) {
			case "ephemeral_5m_input_tokens":
				return cf.once(0) && l.index(&n)
			case "ephemeral_1h_input_tokens":
				return cf.once(1) && l.index(&n)
			}
			return false
		})
	}
	return false
}

// blockStart is a content_block_start's block in its plain shape: members
// "type", "id", "name" (strings without escapes), "text", "thinking",
// "signature", "data" (strings), "input" (the empty object a tool call
// starts with) and "caller" (an object of strings without escapes), the
// type required. Anything else is left to the SDK.
type blockStart struct {
	raw            []byte // the object's bytes; nil: none read
	typ, id, name  []byte
	fields, caller fieldSet
}

// read reads the block object.
func (bs *blockStart) read(l *lexer) bool {
	start := l.skipSpace()
	ok := l.object(func(key []byte) bool {
		var v []byte
		var esc bool
		switch string(key) {
		case "type":
			return bs.fields.once(0) && l.str(&bs.typ, &esc) && !esc
		case "id":
			return bs.fields.once(1) && l.str(&bs.id, &esc) && !esc
		case "name":
			return bs.fields.once(2) && l.str(&bs.name, &esc) && !esc
		case "text":
			return bs.fields.once(3) && l.str(&v, &esc)
		case "thinking":
			return bs.fields.once(4) && l.str(&v, &esc)
		case "signature":
			return bs.fields.once(5) && l.str(&v, &esc)
		case "data":
			return bs.fields.once(6) && l.str(&v, &esc)
		case "input":
			return bs.fields.once(7) && l.eat('{') && l.eat('}')
		case "caller":
			return bs.fields.once(8) && l.object(func(key []byte) bool {
				switch string(key) {
				case "type":
					return bs.caller.once(0) && l.str(&v, &esc) && !esc
				case "tool_id":
					return bs.caller.once(1) && l.str(&v, &esc) && !esc
				}
				return false
			})
		}
		return false
	})
	if !ok || bs.typ == nil {
		return false
	}
	bs.raw = l.b[start:l.i:l.i]
	return true
}

// plainBlock reports whether raw, a content block's wire JSON, is a text
// block of "type" and "text" alone, or a thinking block of "type",
// "thinking" and "signature" alone, each once and a string (blockStart's
// reading, its fields then checked), and returns its type. Decoding such
// a block into a coachd.Block gives nothing that block does not lay over
// from the SDK's typed fields (no Extra): it decoded the whole text,
// unescaped, to drop it (2.5 % of the objects coachd allocated under load
// went to decoding blocks there). Anything else, block decodes.
// TestPlainBlock and FuzzPlainBlock compare the two.
func plainBlock(raw []byte) (string, bool) {
	var bs blockStart
	l := lexer{b: raw}
	if !bs.read(&l) || l.skipSpace() != len(raw) {
		return "", false
	}
	const typ, text, thinking, signature = 1 << 0, 1 << 3, 1 << 4, 1 << 5 // read's bits
	switch string(bs.typ) {
	case coachd.BlockText:
		return coachd.BlockText, bs.fields&^(typ|text) == 0
	case coachd.BlockThinking:
		return coachd.BlockThinking, bs.fields&^(typ|thinking|signature) == 0
	}
	return "", false
}

// plainToolUse reports whether raw, a tool_use block's wire JSON, is the
// one the SDK writes at the block's stop for cb, byte for byte:
// {"id":…,"input":…,"name":…,"type":"tool_use"}, its id and name plain
// printable ASCII (no byte JSON escapes) and its input cb's, valid JSON.
// Decoding such a block gives its type, cb's id and name, and an input
// layOver replaces; block takes those without decoding, where decoding
// (encoding/json through a map) took 33 allocations and about 10 µs warm
// for a save_note call (BenchmarkBlockToolUse), between a tool turn's two
// calls. Anything else, block decodes. TestPlainBlock and FuzzPlainBlock
// compare the two.
func plainToolUse(raw []byte, cb *sdk.ContentBlockUnion) bool {
	if !plainASCII(cb.ID) || !plainASCII(cb.Name) || len(cb.Input) == 0 || !coachd.ValidJSON(cb.Input) {
		return false
	}
	rest, ok := raw, true
	take := func(s string) {
		ok = ok && len(rest) >= len(s) && string(rest[:len(s)]) == s
		if ok {
			rest = rest[len(s):]
		}
	}
	take(`{"id":"`)
	take(cb.ID)
	take(`","input":`)
	if ok = ok && bytes.HasPrefix(rest, cb.Input); ok {
		rest = rest[len(cb.Input):]
	}
	take(`,"name":"`)
	take(cb.Name)
	take(`","type":"tool_use"}`)
	return ok && len(rest) == 0
}

// plainASCII reports whether s is written in a JSON string as it is, by
// any encoder: printable ASCII but for the quote, the backslash and the
// bytes HTML-safe encoders escape (<, >, &).
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// start sets ev to the message_start or content_block_start decode read
// (typ, index, the message ms or the block bs) when the event has nothing
// else (other: a delta or usage beside them); false otherwise. Only the
// union's fields that accept and Message.Accumulate read of these events
// are set: the message, and the block's type, id and name. The block
// itself goes into the message in stream.accept, decoded once (r.block).
func (r *sseReader) start(typ []byte, index int64, other bool, ms *msgStart, bs *blockStart, ev *sdk.MessageStreamEventUnion) bool {
	if other {
		return false
	}
	switch {
	case string(typ) == "message_start" && ms.seen && bs.raw == nil && index < 0:
		reset(ev, "message_start", 0)
		ev.Message = sdk.Message{
			ID: string(ms.id), Type: "message", Role: "assistant", Model: sdk.Model(ms.model),
			Content: []sdk.ContentBlockUnion{},
			Usage: sdk.Usage{InputTokens: ms.tokens[0], CacheCreationInputTokens: ms.tokens[1],
				CacheReadInputTokens: ms.tokens[2], OutputTokens: ms.tokens[3]},
		}
	case string(typ) == "content_block_start" && !ms.seen && bs.raw != nil && index >= 0:
		reset(ev, "content_block_start", index)
		ev.ContentBlock.Type, ev.ContentBlock.ID, ev.ContentBlock.Name = string(bs.typ), string(bs.id), string(bs.name)
		r.block = bs.raw
	default:
		return false
	}
	return true
}

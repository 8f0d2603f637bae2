package anthropictest

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/coachd/coachd"
)

// decodeRequest fills req from a request body as json.Unmarshal does, at a
// fraction of the cost for the bodies clients send: after one validity
// check the body is cut up with the scanner (scan.go) and only the scalars
// are decoded; the raw parts alias body. Anything unusual (invalid JSON, a
// key the decoder would match case-insensitively, a repeated field, a value
// of an unexpected type) goes to json.Unmarshal itself, so the outcome and
// the error text are the decoder's.
func decodeRequest(body []byte, req *wireRequest) error {
	if json.Valid(body) && quickRequest(body, req) {
		return nil
	}
	*req = wireRequest{}
	return json.Unmarshal(body, req)
}

// The fields of wireRequest and wireMessage, by their JSON names.
var (
	requestFields = []string{"model", "max_tokens", "messages", "system", "tools", "stream", "thinking"}
	messageFields = []string{"role", "content"}
)

// field returns the index of key among names, -1 for a key the decoder
// ignores, and ok false for one it might match some other way (escaped,
// another case).
func field(key []byte, names []string) (int, bool) {
	if !plainKey(key) {
		return 0, false
	}
	for i, n := range names {
		if string(key) == n {
			return i, true
		}
	}
	for _, n := range names {
		if bytes.EqualFold(key, []byte(n)) {
			return 0, false
		}
	}
	return -1, true
}

// quickRequest is decodeRequest's fast path over a valid body; false
// leaves req in any state.
func quickRequest(body []byte, req *wireRequest) bool {
	ms, ok := members(nil, body)
	if !ok {
		return false
	}
	seen := 0
	for _, m := range ms {
		f, ok := field(m.key, requestFields)
		if !ok {
			return false
		}
		if f < 0 {
			continue
		}
		if seen&(1<<f) != 0 {
			return false // the decoder merges repeats
		}
		seen |= 1 << f
		v := m.value
		null := string(v) == "null"
		switch requestFields[f] {
		case "model":
			if !null && !quickString(v, &req.Model) {
				return false
			}
		case "max_tokens":
			if !null {
				n, err := strconv.ParseInt(string(v), 10, 64)
				if err != nil {
					return false
				}
				req.MaxTokens = &n
			}
		case "stream":
			switch string(v) {
			case "true":
				req.Stream = true
			case "false", "null":
			default:
				return false
			}
		case "system":
			req.System = json.RawMessage(v)
		case "tools":
			if !null {
				if req.Tools, ok = elements(nil, v); !ok {
					return false
				}
			}
		case "thinking":
			if json.Unmarshal(v, &req.Thinking) != nil {
				return false
			}
		case "messages":
			if !null && !quickMessages(v, req) {
				return false
			}
		}
	}
	return true
}

func quickMessages(v []byte, req *wireRequest) bool {
	elems, ok := elements(nil, v)
	if !ok {
		return false
	}
	req.Messages = make([]wireMessage, len(elems))
	var ms []member
	for i, e := range elems {
		if ms, ok = members(ms[:0], e); !ok {
			return false
		}
		seen := 0
		for _, m := range ms {
			f, ok := field(m.key, messageFields)
			if !ok {
				return false
			}
			if f < 0 {
				continue
			}
			if seen&(1<<f) != 0 {
				return false
			}
			seen |= 1 << f
			switch messageFields[f] {
			case "role":
				if string(m.value) != "null" && !quickString(m.value, &req.Messages[i].Role) {
					return false
				}
			case "content":
				req.Messages[i].Content = json.RawMessage(m.value)
			}
		}
	}
	return true
}

// quickString decodes the JSON string v into s; false when v is not a
// string.
func quickString(v []byte, s *string) bool {
	if len(v) < 2 || v[0] != '"' {
		return false
	}
	*s = unquote(v[1 : len(v)-1])
	return true
}

// blockHead is what parseRequest checks of a content block: its type, and
// the id of a tool_use or the tool_use_id of a tool_result.
type blockHead struct{ typ, id, toolUseID string }

// peekBlock reads a block's head without decoding the block, when the
// block is one coachd.Block's decoder surely accepts: an object with
// plain, distinct keys and a non-empty string type whose other members are
// strings, nulls, is_error as a boolean, or members held as raw JSON
// (input, content, source; cache_control goes to Extra). Anything else is
// for the decoder, which gives the error.
func peekBlock(raw []byte, ms []member) (blockHead, []member, bool) {
	var h blockHead
	ms, ok := members(ms[:0], raw)
	if !ok {
		return h, ms, false
	}
	var typ, id, useID []byte
	for i, m := range ms {
		if !plainKey(m.key) {
			return h, ms, false
		}
		for _, o := range ms[:i] {
			if bytes.Equal(o.key, m.key) {
				return h, ms, false
			}
		}
		v := m.value
		str := v[0] == '"'
		switch string(m.key) {
		case "input", "content", "source", "cache_control":
			continue
		case "is_error":
			if s := string(v); s == "true" || s == "false" || s == "null" {
				continue
			}
			return h, ms, false
		case "type":
			if !str || len(v) <= 2 {
				return h, ms, false
			}
			typ = v
		case "id":
			id = v
		case "tool_use_id":
			useID = v
		}
		if !str && string(v) != "null" {
			return h, ms, false
		}
	}
	if typ == nil {
		return h, ms, false
	}
	h.typ = unquote(typ[1 : len(typ)-1])
	str := func(v []byte) string {
		if len(v) < 2 || v[0] != '"' {
			return "" // absent or null
		}
		return unquote(v[1 : len(v)-1])
	}
	switch h.typ {
	case coachd.BlockToolUse:
		h.id = str(id)
	case coachd.BlockToolResult:
		h.toolUseID = str(useID)
	}
	return h, ms, true
}

package coachd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// Reading stored blocks. A stored message's blocks are one JSON array,
// and a photo or PDF block in it holds megabytes of base64. encoding/json
// read each such block about five times over (checking the array, skipping
// the block, checking it again inside UnmarshalJSON, scanning its fields
// into a map, copying them): most of the CPU a turn with photos in its
// history spent in coachd. The fast path below checks the whole text once
// (ValidJSON, which skips a string's plain bytes eight at a time), then
// finds each field's bytes with bytes.IndexByte, and reads the fields as
// UnmarshalJSON always has. Whatever it does not expect (a key with an
// escape or a byte past ASCII, a block that is not an object, a field of
// the wrong type) is read again the slow way, so the result and the error
// are encoding/json's (FuzzUnmarshalBlocks, FuzzBlockUnmarshal).

// UnmarshalBlocks reads a JSON array of blocks as json.Unmarshal does
// into a []Block. The blocks' raw fields (Input, Content, Source, Extra)
// are slices of data, which the caller gives up: it must not change data
// afterwards.
func UnmarshalBlocks(data []byte) ([]Block, error) {
	if blocks, ok := decodeBlocks(data); ok {
		return blocks, nil
	}
	var blocks []Block
	err := json.Unmarshal(data, &blocks)
	return blocks, err
}

// decodeBlocks is UnmarshalBlocks' fast path; false sends data the slow way.
func decodeBlocks(data []byte) ([]Block, bool) {
	if !ValidJSON(data) {
		return nil, false
	}
	i := skipSpace(data, 0)
	if data[i] != '[' {
		return nil, false
	}
	blocks := []Block{}
	for i = skipSpace(data, i+1); data[i] != ']'; {
		end := valueEnd(data, i)
		var b Block
		if data[i] != '{' || !b.decodeObject(data[i:end], false) {
			return nil, false
		}
		blocks = append(blocks, b)
		if i = skipSpace(data, end); data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	return blocks, true
}

// UnmarshalJSON reads a block, keeping unknown fields in Extra.
func (b *Block) UnmarshalJSON(data []byte) error {
	if ValidJSON(data) {
		if i := skipSpace(data, 0); data[i] == '{' {
			var fast Block
			if fast.decodeObject(data[i:valueEnd(data, i)], true) {
				*b = fast
				return nil
			}
		}
	}
	return b.unmarshalSlow(data)
}

// unmarshalSlow is UnmarshalJSON through encoding/json alone: the fast
// path's fallback and its tests' oracle.
func (b *Block) unmarshalSlow(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	*b = Block{}
	return b.setFields(m, false, func(v []byte, s *string) error { return json.Unmarshal(v, s) })
}

// decodeObject reads obj, one valid JSON object, into the zero block b:
// false if a key is not plain ASCII or a field does not read. copyRaw
// copies the raw fields out of obj.
func (b *Block) decodeObject(obj []byte, copyRaw bool) bool {
	m := make(map[string]json.RawMessage, 4)
	for i := skipSpace(obj, 1); obj[i] != '}'; {
		j := stringEnd(obj, i)
		key := obj[i+1 : j-1]
		for _, c := range key {
			if c == '\\' || c >= utf8.RuneSelf {
				return false
			}
		}
		i = skipSpace(obj, skipSpace(obj, j)+1) // past the colon
		end := valueEnd(obj, i)
		m[string(key)] = obj[i:end]
		if i = skipSpace(obj, end); obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	return b.setFields(m, copyRaw, jsonString) == nil
}

// setFields fills the zero block b from its fields by name, keeping those
// it does not type in Extra; copyRaw copies the raw ones, and str reads a
// string field.
func (b *Block) setFields(m map[string]json.RawMessage, copyRaw bool, str func([]byte, *string) error) error {
	raw := func(v json.RawMessage) json.RawMessage {
		if copyRaw {
			return bytes.Clone(v)
		}
		return v
	}
	typ, ok := m["type"]
	if !ok {
		return fmt.Errorf("coachd: content block without type")
	}
	if err := str(typ, &b.Type); err != nil || b.Type == "" {
		return fmt.Errorf("coachd: content block type must be a non-empty string")
	}
	delete(m, "type")
	for _, name := range known[b.Type] {
		v, ok := m[name]
		if !ok {
			continue
		}
		var err error
		switch name {
		case "text":
			err = str(v, &b.Text)
		case "thinking":
			err = str(v, &b.Thinking)
		case "signature":
			err = str(v, &b.Signature)
		case "data":
			err = str(v, &b.Data)
		case "id":
			err = str(v, &b.ID)
		case "name":
			err = str(v, &b.Name)
		case "tool_use_id":
			err = str(v, &b.ToolUseID)
		case "is_error":
			err = json.Unmarshal(v, &b.IsError)
		case "input":
			b.Input = raw(v)
		case "content":
			b.Content = raw(v)
		case "source":
			b.Source = raw(v)
		}
		if err != nil {
			return fmt.Errorf("coachd: %s block: field %s: %w", b.Type, name, err)
		}
		delete(m, name)
	}
	if len(m) > 0 {
		b.Extra = make(map[string]json.RawMessage, len(m))
		for k, v := range m {
			b.Extra[k] = raw(v)
		}
	}
	return nil
}

// jsonString reads the JSON value v into *s as json.Unmarshal does; a
// string with no escape and valid UTF-8 is its own bytes.
func jsonString(v []byte, s *string) error {
	if n := len(v); n >= 2 && v[0] == '"' && bytes.IndexByte(v, '\\') < 0 && utf8.Valid(v[1:n-1]) {
		*s = string(v[1 : n-1])
		return nil
	}
	return json.Unmarshal(v, s)
}

// valueEnd is the index after the value that begins at data[i], in valid
// JSON.
func valueEnd(data []byte, i int) int {
	depth := 0
	for {
		switch data[i] {
		case '"':
			if i = stringEnd(data, i); depth == 0 {
				return i
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return i + 1
			}
		case ' ', '\t', '\n', '\r', ',', ':':
		default:
			if depth == 0 { // a number or a literal: up to what follows it
				for i < len(data) && !isDelim(data[i]) {
					i++
				}
				return i
			}
		}
		i++
	}
}

func isDelim(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', ',', ']', '}':
		return true
	}
	return false
}

// stringEnd is the index after the string whose quote is data[i], in
// valid JSON: the first quote after it not escaped by an odd run of
// backslashes.
func stringEnd(data []byte, i int) int {
	for j := i + 1; ; j++ {
		j += bytes.IndexByte(data[j:], '"')
		n := 0
		for data[j-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
	}
}

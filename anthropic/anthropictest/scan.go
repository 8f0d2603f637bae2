package anthropictest

import (
	"bytes"
	"encoding/json"
	"slices"
)

// A light scanner over JSON that json.Unmarshal has already checked (a
// request body is decoded once, then its parts are only cut up): it finds
// where values, array elements and object members start and end, without
// decoding or copying them. On input that is not valid JSON it reports
// failure or returns nonsense spans, never panics.

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// stringEnd returns the index just past the string whose opening quote is
// at b[i], or -1 when it does not end.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		j += k
		escaped := false // by an odd run of backslashes before it
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			escaped = !escaped
		}
		if !escaped {
			return j + 1
		}
		j++
	}
	return -1
}

// valueEnd returns the index just past the value that starts at b[i], or
// -1 when there is none.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				if j = stringEnd(b, j); j < 0 {
					return -1
				}
				j--
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	case ',', ':', '}', ']':
		return -1
	}
	j := i
	for j < len(b) && !isSpace(b[j]) && b[j] != ',' && b[j] != ':' && b[j] != '}' && b[j] != ']' {
		j++
	}
	return j
}

// elements appends the elements of the array b to dst, as sent (no
// surrounding space), as the decoder fills a []json.RawMessage.
func elements(dst []json.RawMessage, b []byte) ([]json.RawMessage, bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return dst, false
	}
	if i = skipSpace(b, i+1); i < len(b) && b[i] == ']' {
		return dst, skipSpace(b, i+1) == len(b)
	}
	for {
		end := valueEnd(b, i)
		if end < 0 {
			return dst, false
		}
		dst = append(dst, b[i:end:end])
		if i = skipSpace(b, end); i >= len(b) {
			return dst, false
		}
		switch b[i] {
		case ']':
			return dst, skipSpace(b, i+1) == len(b)
		case ',':
			i = skipSpace(b, i+1)
		default:
			return dst, false
		}
	}
}

// member is one member of an object: its key as sent, without the quotes,
// and its value as sent.
type member struct{ key, value []byte }

// members appends the members of the object b to dst.
func members(dst []member, b []byte) ([]member, bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return dst, false
	}
	if i = skipSpace(b, i+1); i < len(b) && b[i] == '}' {
		return dst, skipSpace(b, i+1) == len(b)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return dst, false
		}
		ke := stringEnd(b, i)
		if ke < 0 {
			return dst, false
		}
		key := b[i+1 : ke-1]
		if i = skipSpace(b, ke); i >= len(b) || b[i] != ':' {
			return dst, false
		}
		i = skipSpace(b, i+1)
		end := valueEnd(b, i)
		if end < 0 {
			return dst, false
		}
		dst = append(dst, member{key, b[i:end]})
		if i = skipSpace(b, end); i >= len(b) {
			return dst, false
		}
		switch b[i] {
		case '}':
			return dst, skipSpace(b, i+1) == len(b)
		case ',':
			i = skipSpace(b, i+1)
		default:
			return dst, false
		}
	}
}

// plainKey reports whether json.Marshal writes the key k (as sent, between
// its quotes) back byte for byte: printable ASCII that needs no escape.
func plainKey(k []byte) bool {
	for _, c := range k {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// plainValue reports whether json.Marshal writes the json.RawMessage v
// back byte for byte: compact (no space outside strings) and nothing it
// escapes for HTML (<, >, &, U+2028, U+2029).
func plainValue(v []byte) bool {
	if len(v) > 0 && v[0] == '"' {
		// One string: space inside it stays.
		if bytes.IndexByte(v, '<') >= 0 || bytes.IndexByte(v, '>') >= 0 || bytes.IndexByte(v, '&') >= 0 {
			return false
		}
		for i := 0; ; i++ {
			k := bytes.IndexByte(v[i:], 0xE2)
			if k < 0 {
				return true
			}
			if i += k; i+2 < len(v) && v[i+1] == 0x80 && v[i+2]&^1 == 0xA8 {
				return false
			}
		}
	}
	in := false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '<' || c == '>' || c == '&':
			return false
		case c == 0xE2 && i+2 < len(v) && v[i+1] == 0x80 && v[i+2]&^1 == 0xA8:
			return false
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case !in && isSpace(c):
			return false
		}
	}
	return true
}

// canonical appends a block as the cache accounting sees it (json.Marshal
// of the block decoded into a map[string]json.RawMessage, without
// cache_control: keys sorted, values compact and HTML-escaped) and returns
// its cache_control value and whether it had one. Blocks as the SDK writes
// them are rewritten by sorting their members; anything else goes the
// long way (canonicalMap). ms is scratch space.
func canonical(dst, raw []byte, ms []member) (out, cc []byte, bp bool, scratch []member) {
	if len(raw) == 0 || raw[0] != '{' {
		out, cc, bp = canonicalMap(dst, raw)
		return out, cc, bp, ms
	}
	ms, ok := members(ms[:0], raw)
	for i := 0; ok && i < len(ms); i++ {
		ok = plainKey(ms[i].key) && plainValue(ms[i].value)
	}
	if ok {
		slices.SortFunc(ms, func(a, b member) int { return bytes.Compare(a.key, b.key) })
		for i := 1; ok && i < len(ms); i++ {
			ok = !bytes.Equal(ms[i-1].key, ms[i].key) // a map keeps the last
		}
	}
	if !ok {
		out, cc, bp = canonicalMap(dst, raw)
		return out, cc, bp, ms
	}
	dst = append(dst, '{')
	n := 0
	for _, m := range ms {
		if string(m.key) == "cache_control" {
			cc, bp = m.value, true
			continue
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = append(dst, '"')
		dst = append(dst, m.key...)
		dst = append(dst, '"', ':')
		dst = append(dst, m.value...)
	}
	return append(dst, '}'), cc, bp, ms
}

// canonicalMap is canonical by the definition: decode into a map, drop
// cache_control, marshal. Something that is not an object is taken as
// sent.
func canonicalMap(dst, raw []byte) ([]byte, []byte, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return append(dst, raw...), nil, false
	}
	cc, bp := m["cache_control"]
	delete(m, "cache_control")
	b, _ := json.Marshal(m)
	return append(dst, b...), cc, bp
}

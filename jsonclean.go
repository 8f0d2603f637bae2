package coachd

import "encoding/binary"

// CleanJSON reports whether valid JSON raw is in the form encoding/json
// writes a json.RawMessage in: no space between tokens, and nothing in its
// strings that it escapes (<, >, & and U+2028, U+2029). Raw JSON in that
// form is written as it is; other raw JSON goes through AppendCleanJSON.
func CleanJSON(raw []byte) bool {
	if len(raw) >= 512 {
		return cleanLong(raw)
	}
	in := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; c {
		case '"':
			in = !in
		case '\\':
			i++ // only inside strings in valid JSON; skips the escaped byte
		case ' ', '\t', '\n', '\r':
			if !in {
				return false
			}
		case '<', '>', '&':
			return false
		case 0xE2:
			if i+2 < len(raw) && raw[i+1] == 0x80 && raw[i+2]&^1 == 0xA8 {
				return false
			}
		}
	}
	return true
}

// cleanLong is CleanJSON for long JSON: it passes over a string's plain
// bytes eight at a time (a photo's megabytes of base64), which costs a
// short string more than it saves.
func cleanLong(raw []byte) bool {
	in := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; c {
		case '"':
			if in = !in; in {
				i = skipInert(raw, i+1) - 1
			}
		case '\\':
			i++
		case ' ', '\t', '\n', '\r':
			if !in {
				return false
			}
		case '<', '>', '&':
			return false
		case 0xE2:
			if i+2 < len(raw) && raw[i+1] == 0x80 && raw[i+2]&^1 == 0xA8 {
				return false
			}
		}
	}
	return true
}

// skipInert skips, eight bytes at a time, bytes CleanJSON passes over
// in or out of a string (none of " \ < > &, no space or control
// character, nothing past ASCII): the index of the first eight bytes that
// hold another, or past the last whole eight. A photo's base64 is
// megabytes of them.
func skipInert(raw []byte, i int) int {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(raw); i += 8 {
		x := binary.LittleEndian.Uint64(raw[i:])
		q, bs, lt, gt, amp := x^'"'*ones, x^'\\'*ones, x^'<'*ones, x^'>'*ones, x^'&'*ones
		zero := (q-ones)&^q | (bs-ones)&^bs | (lt-ones)&^lt | (gt-ones)&^gt | (amp-ones)&^amp
		if (zero|(x-0x21*ones)&^x|x)&high != 0 { // one of them, below '!', or past ASCII
			break
		}
	}
	return i
}

// AppendCleanJSON appends valid JSON raw as encoding/json writes a
// json.RawMessage: without the space between tokens, and with <, >, &,
// U+2028 and U+2029 escaped (in valid JSON they can only be in strings).
func AppendCleanJSON(dst, raw []byte) []byte {
	inString, escaped := false, false
	start := 0
	for i := 0; i < len(raw); i++ {
		b := raw[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			case b == '<' || b == '>' || b == '&':
				dst = append(dst, raw[start:i]...)
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
				start = i + 1
			case b == 0xE2 && i+2 < len(raw) && raw[i+1] == 0x80 && raw[i+2]&^1 == 0xA8:
				dst = append(dst, raw[start:i]...)
				dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[raw[i+2]&0xF])
				i += 2
				start = i + 1
			}
			continue
		}
		switch b {
		case '"':
			inString = true
		case ' ', '\t', '\n', '\r':
			dst = append(dst, raw[start:i]...)
			start = i + 1
		}
	}
	return append(dst, raw[start:]...)
}

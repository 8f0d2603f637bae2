package coachd

import (
	"strings"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// plainJSON says which bytes a JSON string holds as they are: printable
// ASCII but the quote and the backslash. plainJSONHTML leaves out <, >
// and & too. Bytes from 0x80 on are looked at as UTF-8.
var plainJSON, plainJSONHTML = plainBytes(""), plainBytes("<>&")

func plainBytes(escaped string) (t [256]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\' && !strings.ContainsRune(escaped, rune(b))
	}
	return t
}

// appendJSONString appends s as a JSON string exactly as json.Marshal
// writes it (HTML escaping on). It lets Block.MarshalJSON write its fields
// without a json.Marshal (and its allocations) per field.
func appendJSONString(dst []byte, s string) []byte { return AppendJSONString(dst, s, true) }

// AppendJSONString appends s as a JSON string exactly as encoding/json
// writes it: control characters escaped (\b \f \n \r \t by name, the
// rest as \u00XX), invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped,
// and with html, <, > and & as \u003c \u003e \u0026 (json.Marshal; an
// Encoder with SetEscapeHTML(false) leaves them). FuzzAppendJSONString
// here and in sse hold both modes to encoding/json.
func AppendJSONString(dst []byte, s string, html bool) []byte {
	dst = append(dst, '"')
	plain := &plainJSON
	if html {
		plain = &plainJSONHTML
	}
	start := 0
	for i := 0; i < len(s); {
		// The run of bytes written as they are, in one look each.
		for i < len(s) && plain[s[i]] {
			i++
		}
		if i == len(s) {
			break
		}
		if b := s[i]; b < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

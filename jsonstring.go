package coachd

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

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
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && (!html || b != '<' && b != '>' && b != '&') {
				i++
				continue
			}
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

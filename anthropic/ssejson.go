package anthropic

import "unicode/utf16"

// The JSON reading of sseReader.decode: only what the hand-decoded events
// hold (objects, strings, non-negative integers, null), refusing whatever
// the SDK's decoder (gjson) might read differently from it.

// lexer reads the few JSON shapes decode takes.
type lexer struct {
	b []byte
	i int
}

func (l *lexer) skipSpace() int {
	for l.i < len(l.b) {
		switch l.b[l.i] {
		case ' ', '\t', '\n', '\r':
			l.i++
		default:
			return l.i
		}
	}
	return l.i
}

func (l *lexer) eat(c byte) bool {
	if l.skipSpace() < len(l.b) && l.b[l.i] == c {
		l.i++
		return true
	}
	return false
}

// object reads a non-empty object, calling member after each key's colon
// to read its value.
func (l *lexer) object(member func(key []byte) bool) bool {
	if !l.eat('{') {
		return false
	}
	for {
		var key []byte
		var esc bool
		if !l.str(&key, &esc) || esc || !l.eat(':') || !member(key) {
			return false
		}
		if l.eat(',') {
			continue
		}
		return l.eat('}')
	}
}

// str reads a string into *raw (its bytes between the quotes, never nil)
// and whether it has escapes. It refuses control characters, unknown
// escapes and surrogate escapes (gjson and encoding/json may differ on
// them; the SDK decides).
func (l *lexer) str(raw *[]byte, esc *bool) bool {
	if !l.eat('"') {
		return false
	}
	start := l.i
	for l.i < len(l.b) {
		c := l.b[l.i]
		switch {
		case c == '"':
			*raw = l.b[start:l.i:l.i]
			l.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			*esc = true
			if l.i+1 >= len(l.b) {
				return false
			}
			switch l.b[l.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				l.i += 2
			case 'u':
				if l.i+6 > len(l.b) || !isHex4(l.b[l.i+2:l.i+6]) || utf16.IsSurrogate(hex4(l.b[l.i+2:l.i+6])) {
					return false
				}
				l.i += 6
			default:
				return false
			}
		default:
			l.i++
		}
	}
	return false
}

// null reads a null.
func (l *lexer) null() bool {
	if l.skipSpace()+4 <= len(l.b) && string(l.b[l.i:l.i+4]) == "null" {
		l.i += 4
		return true
	}
	return false
}

// index reads a non-negative integer of at most 15 digits.
func (l *lexer) index(n *int64) bool {
	l.skipSpace()
	start := l.i
	var v int64
	for l.i < len(l.b) && l.b[l.i] >= '0' && l.b[l.i] <= '9' {
		v = v*10 + int64(l.b[l.i]-'0')
		l.i++
	}
	digits := l.i - start
	if digits == 0 || digits > 15 || digits > 1 && l.b[start] == '0' {
		return false
	}
	*n = v
	return true
}

// fieldSet notes the fields of an object read so far, a bit each: once
// refuses a repeat (gjson and encoding/json keep different ones).
type fieldSet uint32

func (f *fieldSet) once(bit uint) bool {
	if *f&(1<<bit) != 0 {
		return false
	}
	*f |= 1 << bit
	return true
}

func isHex4(b []byte) bool {
	for _, c := range b[:4] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		r <<= 4
		switch {
		case c <= '9':
			r |= rune(c - '0')
		case c >= 'a':
			r |= rune(c - 'a' + 10)
		default:
			r |= rune(c - 'A' + 10)
		}
	}
	return r
}

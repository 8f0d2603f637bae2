package coachd

import "encoding/binary"

// maxJSONDepth is how deeply json.Valid lets arrays and objects nest.
const maxJSONDepth = 10000

// ValidJSON reports whether data is one JSON value, space around it
// allowed, exactly as json.Valid does (nesting up to 10,000 deep, bytes
// that are not UTF-8 let through in strings). It is one pass of plain
// loops where encoding/json's scanner makes a call through a function
// value for every byte: a model request checks each raw input and result
// of its history, and a stored block or event its own (about 2 % of
// coachd's CPU under load went to json.Valid).
func ValidJSON(data []byte) bool {
	var buf [32]byte
	stack := buf[:0] // the open containers' '{' and '['
	i := 0
	for {
		// A value begins at i, after any space.
		i = skipSpace(data, i)
		if i >= len(data) {
			return false
		}
		opened := false
		switch c := data[i]; c {
		case '{', '[':
			if len(stack) == maxJSONDepth {
				return false
			}
			// '{'+2 is '}' and '['+2 is ']'.
			if j := skipSpace(data, i+1); j < len(data) && data[j] == c+2 {
				i = j + 1
			} else {
				stack, i, opened = append(stack, c), j, true
			}
		case '"':
			i = skipString(data, i)
		case 't':
			i = skipLiteral(data, i, "true")
		case 'f':
			i = skipLiteral(data, i, "false")
		case 'n':
			i = skipLiteral(data, i, "null")
		default:
			i = skipNumber(data, i)
		}
		if i < 0 {
			return false
		}
		if opened {
			if stack[len(stack)-1] == '{' {
				if i = skipKey(data, i); i < 0 {
					return false
				}
			}
			continue
		}
		// The value ended: close the containers it ends, then go on to
		// the next element of the innermost one left.
		for {
			i = skipSpace(data, i)
			if len(stack) == 0 {
				return i == len(data)
			}
			if i >= len(data) {
				return false
			}
			top := stack[len(stack)-1]
			if data[i] == top+2 {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			if data[i] != ',' {
				return false
			}
			i++
			if top == '{' {
				if i = skipKey(data, i); i < 0 {
					return false
				}
			}
			break
		}
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipKey skips an object's key and its colon, space around both: the
// index after the colon, or -1.
func skipKey(data []byte, i int) int {
	i = skipSpace(data, i)
	if i >= len(data) || data[i] != '"' {
		return -1
	}
	if i = skipString(data, i); i < 0 {
		return -1
	}
	i = skipSpace(data, i)
	if i >= len(data) || data[i] != ':' {
		return -1
	}
	return i + 1
}

// skipString skips the string that begins at data[i] (its quote): the
// index after its closing quote, or -1. Control characters must be
// escaped, and an escape is one of JSON's.
func skipString(data []byte, i int) int {
	for i = skipPlain(data, i+1); i < len(data); {
		switch c := data[i]; {
		case c == '"':
			return i + 1
		case c == '\\':
			if i+1 >= len(data) {
				return -1
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(data) || !isHex(data[i+2]) || !isHex(data[i+3]) || !isHex(data[i+4]) || !isHex(data[i+5]) {
					return -1
				}
				i += 6
			default:
				return -1
			}
			i = skipPlain(data, i)
		case c < 0x20:
			return -1
		default:
			i++
		}
	}
	return -1
}

// skipPlain skips, eight bytes at a time, what a string may hold as it
// is (no quote, backslash or control character): the index of the first
// eight bytes that hold one, or past the last whole eight. A photo's
// base64 is megabytes of such bytes.
func skipPlain(data []byte, i int) int {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(data); i += 8 {
		x := binary.LittleEndian.Uint64(data[i:])
		q, bs := x^'"'*ones, x^'\\'*ones // a zero byte where x has a quote, a backslash
		if ((q-ones)&^q|(bs-ones)&^bs|(x-0x20*ones)&^x)&high != 0 {
			break
		}
	}
	return i
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// skipLiteral skips lit (true, false or null) at data[i], or returns -1.
func skipLiteral(data []byte, i int, lit string) int {
	if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// skipNumber skips the number that begins at data[i]: -?(0|[1-9]\d*),
// then an optional fraction and exponent. It returns the index after it,
// or -1.
func skipNumber(data []byte, i int) int {
	if i < len(data) && data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && '1' <= data[i] && data[i] <= '9':
		i = skipDigits(data, i+1)
	default:
		return -1
	}
	if i < len(data) && data[i] == '.' {
		j := skipDigits(data, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		j := skipDigits(data, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func skipDigits(data []byte, i int) int {
	for i < len(data) && '0' <= data[i] && data[i] <= '9' {
		i++
	}
	return i
}

package agent

import (
	"strings"
)

// LegacyTags are the text-block tags coaches wrote before they had tools.
// Stored documents and notes may still hold them; Sanitize removes them so
// a stale tag never re-enters a prompt and is taken as an instruction.
var LegacyTags = []string{
	"FILE_UPDATE", "SUGGESTED_REPLIES", "DAY_PLAN_DATA", "ENTER_MODE", "EXIT_MODE",
	"REFLECTION_PROMPT", "SESSION_COMPLETE", "PULSE_CHECK", "JOURNAL_DATA", "OPTIONS",
}

// maxSanitizePasses bounds Sanitize's passes. Ordinary text needs one or
// two; only text built to reassemble a tag from the pieces around a
// removed one needs more, and it is dropped rather than worked on longer.
const maxSanitizePasses = 8

// angles escapes every '<', and the two characters NFKC folds into one
// (full-width U+FF1C and small U+FE64): with no '<' left, injected text
// cannot open or close a tag of the prompt in any spelling ("< /notes>",
// a no-break space inside, "＜/notes＞"; issue 20 finding 11), which
// matching tag names after normalising could only approximate.
var angles = strings.NewReplacer("<", "&lt;", "\uFF1C", "&lt;", "\uFE64", "&lt;")

// Sanitize returns text without legacy tag blocks ([FILE_UPDATE ...]...
// [/FILE_UPDATE], [SUGGESTED_REPLIES]...), stray legacy tags, action tags
// ([SAVE_NOTE: {...}]) and the '[' of anything left that starts like one,
// and with every '<' escaped as &lt;. It repeats until nothing changes, so
// removing one tag can never assemble another: Sanitize(Sanitize(s)) ==
// Sanitize(s). Each pass is linear in the text (issue 20 finding 2); text
// still changing after maxSanitizePasses is dropped.
func Sanitize(text string) string {
	for pass := 0; strings.IndexByte(text, '[') >= 0; pass++ {
		if pass == maxSanitizePasses {
			return "" // fail closed
		}
		prev := text
		text, _ = StripActionTags(text)
		text = stripLegacy(text)
		if text == prev {
			break
		}
	}
	return angles.Replace(text)
}

// stripLegacy removes, in one left-to-right pass, legacy blocks
// ([NAME attrs]...[/NAME]), legacy tags ([NAME attrs], [/NAME]), bare
// legacy openings ("[NAME" not followed by a word character) and the '['
// of action tag openings ("[NAME: {") that did not make a whole tag. The
// searches ahead are cached, so every byte is looked at a bounded number
// of times.
func stripLegacy(s string) string {
	out := make([]byte, 0, len(s))
	var stop lookahead                            // next ']' or '\n'
	closers := make([]lookahead, len(LegacyTags)) // next "[/NAME]"
	for i := 0; i < len(s); {
		j := strings.IndexByte(s[i:], '[')
		if j < 0 {
			out = append(out, s[i:]...)
			break
		}
		p := i + j
		for p+1 < len(s) && s[p+1] == '[' { // in "[[[" only the last '[' can start a tag
			p++
		}
		out = append(out, s[i:p]...)
		i = p + 1
		closing := p+1 < len(s) && s[p+1] == '/'
		k := p + 1
		if closing {
			k++
		}
		tag := legacyName(s[k:])
		end := -1 // just past a legacy tag's ']'
		if tag >= 0 {
			k += len(LegacyTags[tag])
			switch {
			case k < len(s) && s[k] == ']':
				end = k + 1
			case k < len(s) && strings.IndexByte(" \t:=", s[k]) >= 0:
				if e := stop.next(s, k, func(r string) int { return strings.IndexAny(r, "]\n") }); e >= 0 && s[e] == ']' {
					end = e + 1
				}
			}
		}
		switch {
		case tag >= 0 && end < 0 && (k == len(s) || !isWordByte(s[k])):
			i = k // a bare "[NAME": drop it
		case end < 0 && !closing && actionOpening(s[p+1:]):
			for len(out) > 0 && out[len(out)-1] == '[' { // "[[A: {": no '[' may meet "A: {" again
				out = out[:len(out)-1]
			}
		case end < 0:
			out = append(out, '[')
		case closing:
			i = end
		default:
			closer := "[/" + LegacyTags[tag] + "]"
			if c := closers[tag].next(s, end, func(r string) int { return strings.Index(r, closer) }); c >= 0 {
				i = c + len(closer) // the whole block
			} else {
				i = end
			}
		}
	}
	return string(out)
}

// legacyName returns the index in LegacyTags of the name s starts with,
// or -1. No name is a prefix of another.
func legacyName(s string) int {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return -1
	}
	for i, name := range LegacyTags {
		if name[0] == s[0] && strings.HasPrefix(s, name) {
			return i
		}
	}
	return -1
}

// actionOpening reports whether s (after a '[') starts like an action
// tag: NAME, ':', spaces, '{'.
func actionOpening(s string) bool {
	n := 0
	for n < len(s) && n < maxTagName && (s[n] >= 'A' && s[n] <= 'Z' || s[n] == '_' || n > 0 && s[n] >= '0' && s[n] <= '9') {
		n++
	}
	if n < 2 || n == len(s) || s[n] != ':' {
		return false
	}
	for n++; n < len(s) && isSpace(s[n]); n++ {
	}
	return n < len(s) && s[n] == '{'
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// lookahead caches one forward search over a string whose positions only
// grow: a search from i answered at or after i is still the answer, and
// "none after i" stays true for later positions.
type lookahead struct {
	from, at int // the last search started at from and found at (or -1)
	done     bool
}

func (l *lookahead) next(s string, i int, find func(string) int) int {
	if l.done && i >= l.from && (l.at < 0 || l.at >= i) {
		return l.at
	}
	l.from, l.at, l.done = i, find(s[i:]), true
	if l.at >= 0 {
		l.at += i
	}
	return l.at
}

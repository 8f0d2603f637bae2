package agent

import (
	"encoding/json"
	"strings"
)

// Action tags are how text-only coaches act: [SAVE_NOTE: {...}] written in
// the reply. With Agent.ActionTags the runner finds them in the streamed
// text (a tag may arrive split across any number of deltas), keeps them
// out of what the client sees and what is stored, and runs each as a call
// of the tool of the same name, lowercased.

// MaxActionTagBytes bounds one tag; a longer bracket run is plain text.
const MaxActionTagBytes = 16 << 10

// ActionTag is one tag found in text.
type ActionTag struct {
	Name    string          // as written: SAVE_NOTE
	Payload json.RawMessage // the JSON object
}

// Tool is the name of the tool the tag calls.
func (a ActionTag) Tool() string { return strings.ToLower(a.Name) }

type tagMatch int

const (
	tagInvalid tagMatch = iota
	tagIncomplete
	tagComplete
)

// matchTag says whether s, which starts with '[', begins with an action
// tag: [NAME: {json}] with NAME upper-case letters, digits and
// underscores. n is the tag's length when complete.
func matchTag(s string) (n int, m tagMatch) {
	i := 1
	for ; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' || c == '_' || (i > 1 && c >= '0' && c <= '9') {
			if i > 41 {
				return 0, tagInvalid
			}
			continue
		}
		break
	}
	if i == len(s) {
		return 0, tagIncomplete
	}
	if i < 3 || s[i] != ':' {
		return 0, tagInvalid
	}
	i = skipSpace(s, i+1)
	if i == len(s) {
		return 0, tagIncomplete
	}
	if s[i] != '{' {
		return 0, tagInvalid
	}
	start, depth, inStr, esc := i, 0, false, false
	for ; i < len(s); i++ {
		if i > MaxActionTagBytes {
			return 0, tagInvalid
		}
		c := s[i]
		switch {
		case inStr && esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case inStr && c == '"':
			inStr = false
		case inStr:
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
		}
		if depth == 0 {
			break
		}
	}
	if i >= len(s) {
		return 0, tagIncomplete
	}
	if !json.Valid([]byte(s[start : i+1])) {
		return 0, tagInvalid
	}
	j := skipSpace(s, i+1)
	if j == len(s) {
		return 0, tagIncomplete
	}
	if s[j] != ']' {
		return 0, tagInvalid
	}
	return j + 1, tagComplete
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// TagFilter removes action tags from text streamed in pieces. Text that
// might still become a tag is held back until it is decided.
type TagFilter struct {
	pending string
	tags    []ActionTag
}

// Write adds a piece of text and returns what can be shown now.
func (f *TagFilter) Write(chunk string) string { return f.scan(f.pending+chunk, false) }

// Flush ends the text: held-back text that never became a tag is
// returned.
func (f *TagFilter) Flush() string { return f.scan(f.pending, true) }

// Tags returns the tags found so far and forgets them.
func (f *TagFilter) Tags() []ActionTag {
	t := f.tags
	f.tags = nil
	return t
}

func (f *TagFilter) scan(buf string, final bool) string {
	f.pending = ""
	var out strings.Builder
	for {
		i := strings.IndexByte(buf, '[')
		if i < 0 {
			out.WriteString(buf)
			return out.String()
		}
		out.WriteString(buf[:i])
		buf = buf[i:]
		n, m := matchTag(buf)
		switch {
		case m == tagComplete:
			name, payload, _ := strings.Cut(buf[1:n-1], ":")
			f.tags = append(f.tags, ActionTag{Name: name, Payload: json.RawMessage(strings.TrimSpace(payload))})
			buf = buf[n:]
		case m == tagIncomplete && !final:
			f.pending = buf
			return out.String()
		default:
			out.WriteByte('[')
			buf = buf[1:]
		}
	}
}

// StripActionTags returns text without its action tags, and the tags.
func StripActionTags(text string) (string, []ActionTag) {
	var f TagFilter
	out := f.Write(text)
	out += f.Flush()
	return out, f.Tags()
}

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
// The largest note save_note takes (5,000 characters of content and 200
// of title, 4 bytes each in UTF-8, or 6 written as \u escapes) fits.
const MaxActionTagBytes = 40 << 10

// maxTagName bounds a tag's name: the longest tool name (64, as a pack's
// tools and data source actions have them).
const maxTagName = 64

// ActionTag is one tag found in text.
type ActionTag struct {
	Name    string          // as written: SAVE_NOTE
	Payload json.RawMessage // the JSON object
}

// Tool is the name of the tool the tag calls.
func (a ActionTag) Tool() string { return strings.ToLower(a.Name) }

// TagFilter removes action tags from text streamed in pieces. Text that
// might still become a tag is held back until it is decided.
//
// A tag is [NAME: {json}] with NAME of 2 to 64 upper-case letters, digits
// and underscores (not starting with a digit), the object's extent found
// by counting brackets outside JSON strings. The filter is one state
// machine that reads every byte once, wherever the pieces are cut, so its
// cost is linear in the text: a candidate that fails once its object has
// started ("{" never closed within MaxActionTagBytes, invalid JSON, no "]"
// after it) is plain text as a whole, and a tag inside it is not looked
// for again (rescanning from each '[' made hostile text quadratic: issue
// 20 finding 2).
type TagFilter struct {
	held  []byte // the candidate tag read so far, from its '['
	phase tagPhase
	name  int  // name bytes read
	depth int  // bracket depth inside the object
	open  int  // index of the object's '{' in held
	end   int  // index just past the object's closing '}' in held
	str   bool // inside a JSON string
	esc   bool // after a backslash inside a JSON string
	tags  []ActionTag
}

type tagPhase uint8

const (
	phaseText   tagPhase = iota // not in a candidate
	phaseName                   // after '['
	phaseSpace                  // after "NAME:"
	phaseObject                 // inside the {json} object
	phaseTail                   // after the object, before ']'
)

// step says what one byte does to the candidate.
type step uint8

const (
	stepMore       step = iota // the byte belongs to the candidate
	stepDone                   // the byte completes the tag
	stepReject                 // no tag: held is text, the byte is read again as text
	stepRejectWith             // no tag: held and the byte are text
)

// Write adds a piece of text and returns what can be shown now.
func (f *TagFilter) Write(chunk string) string {
	var out strings.Builder
	for i := 0; i < len(chunk); {
		if f.phase == phaseText {
			j := strings.IndexByte(chunk[i:], '[')
			if j < 0 {
				out.WriteString(chunk[i:])
				break
			}
			start, open := i, i+j
			for open+1 < len(chunk) && chunk[open+1] == '[' { // in "[[[" only the last '[' can start a tag
				open++
			}
			i = open + 1
			if i < len(chunk) && !(chunk[i] >= 'A' && chunk[i] <= 'Z' || chunk[i] == '_') {
				out.WriteString(chunk[start:i]) // no name after the '[': text at once
				continue
			}
			out.WriteString(chunk[start:open])
			f.held = append(f.held[:0], '[')
			f.phase = phaseName
			continue
		}
		c := chunk[i]
		switch f.step(c) {
		case stepMore:
			f.held = append(f.held, c)
			i++
		case stepDone:
			f.held = append(f.held, c)
			f.tags = append(f.tags, ActionTag{
				Name:    string(f.held[1 : 1+f.name]),
				Payload: json.RawMessage(string(f.held[f.open:f.end])),
			})
			f.reset()
			i++
		case stepReject:
			out.Write(f.held)
			f.reset()
		case stepRejectWith:
			out.Write(f.held)
			out.WriteByte(c)
			f.reset()
			i++
		}
	}
	return out.String()
}

// Flush ends the text: held-back text that never became a tag is
// returned.
func (f *TagFilter) Flush() string {
	s := string(f.held)
	f.reset()
	return s
}

// Tags returns the tags found so far and forgets them.
func (f *TagFilter) Tags() []ActionTag {
	t := f.tags
	f.tags = nil
	return t
}

func (f *TagFilter) reset() {
	tags, held := f.tags, f.held[:0]
	*f = TagFilter{held: held, tags: tags}
}

func (f *TagFilter) step(c byte) step {
	if len(f.held) >= MaxActionTagBytes {
		return stepReject
	}
	switch f.phase {
	case phaseName:
		switch {
		case c >= 'A' && c <= 'Z' || c == '_' || f.name > 0 && c >= '0' && c <= '9':
			if f.name == maxTagName {
				return stepReject
			}
			f.name++
			return stepMore
		case c == ':' && f.name >= 2:
			f.phase = phaseSpace
			return stepMore
		}
		return stepReject
	case phaseSpace:
		switch {
		case isSpace(c):
			return stepMore
		case c == '{':
			f.phase, f.open, f.depth = phaseObject, len(f.held), 1
			return stepMore
		}
		return stepReject
	case phaseObject:
		switch {
		case f.str && f.esc:
			f.esc = false
		case f.str && c == '\\':
			f.esc = true
		case f.str && c == '"':
			f.str = false
		case f.str:
		case c == '"':
			f.str = true
		case c == '{' || c == '[':
			f.depth++
		case c == '}' || c == ']':
			f.depth--
		}
		if f.depth > 0 {
			return stepMore
		}
		f.end = len(f.held) + 1
		if !json.Valid(append(f.held[f.open:], c)) {
			return stepRejectWith
		}
		f.phase = phaseTail
		return stepMore
	case phaseTail:
		switch {
		case isSpace(c):
			return stepMore
		case c == ']':
			return stepDone
		}
		return stepReject
	}
	return stepReject
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// StripActionTags returns text without its action tags, and the tags.
func StripActionTags(text string) (string, []ActionTag) {
	var f TagFilter
	out := f.Write(text)
	out += f.Flush()
	return out, f.Tags()
}

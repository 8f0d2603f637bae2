package agent

import (
	"bytes"
	"encoding/json"

	"github.com/coachd/coachd"
)

// messagesJSONLen is len(json.Marshal(msgs)) without building it: each
// block is appended into one scratch buffer, and only for a block whose
// raw parts are not as json.Marshal writes them (coachd.Block.AsIs) are
// their compaction and HTML escaping (what json.Marshal does to a
// Marshaler's output) worked out. A long session's size estimate no longer
// allocates per message. It returns 0 when json.Marshal would fail, the
// length of the nil that json.Marshal returns then.
func messagesJSONLen(msgs []coachd.ModelMessage) int {
	return messagesJSONSize(msgs, nil)
}

// messagesJSONSize is messagesJSONLen, adding the text of msgs that is
// not ASCII to dense when it is not nil (a text document's too).
func messagesJSONSize(msgs []coachd.ModelMessage, dense *denseText) int {
	if msgs == nil {
		return len("null")
	}
	var scratch []byte
	var compact bytes.Buffer
	n := 2 // [ ]
	for i := range msgs {
		m := &msgs[i]
		if i > 0 {
			n++ // ,
		}
		scratch = coachd.AppendJSONString(scratch[:0], string(m.Role), true)
		n += len(`{"role":`) + len(scratch) + len(`,"content":`) + 1 // }
		if m.Blocks == nil {
			n += len("null")
			continue
		}
		n += 2 + max(len(m.Blocks)-1, 0) // [ ] and commas
		for j := range m.Blocks {
			if n1, ok := sourceAsIsLen(&m.Blocks[j], &scratch); ok {
				n += n1
				if dense != nil {
					if typ, _, _ := coachd.AttachmentSent(m.Blocks[j]); typ == coachd.MediaText {
						addDense(dense, m.Blocks[j].Source)
					}
				}
				continue
			}
			var err error
			scratch, err = m.Blocks[j].AppendJSON(scratch[:0])
			if err != nil {
				return 0
			}
			if dense != nil {
				addDense(dense, scratch)
			}
			if m.Blocks[j].AsIs() {
				n += len(scratch) // what json.Marshal writes for it
				continue
			}
			compact.Reset()
			if json.Compact(&compact, scratch) != nil {
				return 0
			}
			n += compact.Len() + htmlEscapeGrowth(compact.Bytes())
		}
	}
	return n
}

// sourceAsIsLen is the length of an image or document block's JSON, ok
// when json.Marshal writes it as it is (coachd.Block.AsIs): its source,
// written as it is, is measured, not copied (a photo's megabytes of
// base64); the rest is appended into scratch with a one-byte stand-in.
func sourceAsIsLen(b *coachd.Block, scratch *[]byte) (int, bool) {
	if (b.Type != coachd.BlockImage && b.Type != coachd.BlockDocument) || len(b.Source) == 0 || !b.AsIs() {
		return 0, false
	}
	c := *b
	c.Source = json.RawMessage("0")
	*scratch, _ = c.AppendJSON((*scratch)[:0]) // AsIs: it has a type
	return len(*scratch) - 1 + len(b.Source), true
}

// htmlEscapeGrowth is how many bytes json.HTMLEscape adds to compact JSON:
// <, > and & become \u003c (5 more), U+2028 and U+2029 become \u2028 (3
// more).
func htmlEscapeGrowth(b []byte) int {
	n := 0
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '<' || c == '>' || c == '&':
			n += 5
		case c == 0xE2 && i+2 < len(b) && b[i+1] == 0x80 && b[i+2]&^1 == 0xA8:
			n += 3
		}
	}
	return n
}

// denseText is the text of a request that is not ASCII, which the
// tokenizer splits finer than English's four bytes a token: its bytes,
// and the tokens it may bill in halves, by the length of each character
// in UTF-8: two bytes (accented Latin, Cyrillic, Greek, Arabic, Hebrew) a
// token, three (CJK, kana, Hangul, Indic scripts) a token and a half,
// four (emoji) three tokens.
type denseText struct {
	bytes  int
	halves int64
}

// tokens is the tokens d may bill.
func (d denseText) tokens() int64 { return (d.halves + 1) / 2 }

// addDense adds the characters of b that are not ASCII to d.
func addDense[T ~string | ~[]byte](d *denseText, b T) {
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c < 0x80:
			continue
		case c >= 0xF0:
			d.halves += 6
		case c >= 0xE0:
			d.halves += 3
		case c >= 0xC0:
			d.halves += 2
		}
		d.bytes++ // a continuation byte too
	}
}

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
			var err error
			scratch, err = m.Blocks[j].AppendJSON(scratch[:0])
			if err != nil {
				return 0
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

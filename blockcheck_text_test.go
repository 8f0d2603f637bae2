package coachd_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/coachd/coachd"
)

// TestCheckBlocksTextDocument: a recorded text document is re-sent to the
// API on every later turn, as an attached text file is, but was taken of
// any size and with any characters: 12 MiB of text (millions of tokens, a
// request the API refuses on every later turn) or text hiding its meaning
// from the user behind bidi overrides, which a text attachment may not
// have. It is checked as a text attachment is: at most
// MaxAttachmentBytes, plain text.
func TestCheckBlocksTextDocument(t *testing.T) {
	doc := func(text string) []coachd.Block {
		src, _ := json.Marshal(map[string]string{"type": "text", "media_type": "text/plain", "data": text})
		return []coachd.Block{{Type: coachd.BlockDocument, Source: src}}
	}
	t.Run("OK", func(t *testing.T) {
		if errs := coachd.CheckBlocks(coachd.RoleUser, doc("Week 12 notes:\n\tall good\r\n")); len(errs) > 0 {
			t.Fatalf("a plain text document: %+v", errs)
		}
	})
	for _, tc := range []struct{ name, text, code string }{
		{"ErrTooLarge", strings.Repeat("a", coachd.MaxAttachmentBytes+1), "length"},
		{"ErrBidi", "pay \u202Eyadot\u202C later", "format"},
		{"ErrNUL", "a\x00b", "format"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := coachd.CheckBlocks(coachd.RoleUser, doc(tc.text))
			if len(errs) != 1 || errs[0].Field != "[0].source.data" || errs[0].Code != tc.code {
				t.Fatalf("CheckBlocks = %+v, want one %q error on [0].source.data", errs, tc.code)
			}
		})
	}
}

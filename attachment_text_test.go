package coachd_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/coachd/coachd"
)

// TestTextAttachmentLimit: a text document is read as tokens, and a 3 MiB
// one (about 800,000 tokens of English, a million or more of Chinese) is
// far past the model's 200,000-token context: accepted, it failed its turn
// upstream and every later turn of the session that re-sent it. A text
// document is at most MaxTextAttachmentBytes, a bound in bytes that holds
// its tokens for the densest text too (CJK: three bytes and about a token
// a character), refused at the edge with the limit named.
func TestTextAttachmentLimit(t *testing.T) {
	const max = coachd.MaxTextAttachmentBytes
	cjk := func(n int) []byte { return []byte(strings.Repeat("漢", n)) }
	for _, tc := range []struct {
		name string
		data []byte
		ok   bool
	}{
		{"OKAtLimit", bytes.Repeat([]byte("a"), max), true},
		{"OKCJKAtLimit", cjk(max / 3), true},
		{"ErrPastLimit", bytes.Repeat([]byte("a"), max+1), false},
		{"ErrCJKPastLimit", cjk(max/3 + 1), false},
		{"Err3MiB", bytes.Repeat([]byte("a"), coachd.MaxAttachmentBytes), false},
		{"Err3MiBCJK", cjk(coachd.MaxAttachmentBytes / 3), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fe := coachd.CheckAttachment(coachd.MediaText, tc.data)
			if tc.ok {
				if fe != nil {
					t.Fatalf("CheckAttachment of %d bytes of text = %+v", len(tc.data), fe)
				}
				return
			}
			if fe == nil || fe.Field != "data" || fe.Code != "length" || !strings.Contains(fe.Message, "KiB") || !strings.Contains(fe.Message, "tokens") {
				t.Fatalf("CheckAttachment of %d bytes of text = %+v, want a length error naming the limit", len(tc.data), fe)
			}
			u := &coachd.Upload{Name: "notes.txt", MediaType: coachd.MediaText, Data: tc.data}
			if errs := u.Validate(); len(errs) != 1 || errs[0].Code != "length" {
				t.Fatalf("Upload.Validate = %+v", errs)
			}
		})
	}
	// A recorded text document is re-sent as an attached one is.
	t.Run("ErrRecorded", func(t *testing.T) {
		doc := coachd.AttachmentBlock(coachd.MediaText, "log.txt", cjk(max/3+1))
		if errs := coachd.CheckBlocks(coachd.RoleUser, []coachd.Block{doc}); len(errs) != 1 || errs[0].Field != "[0].source.data" || errs[0].Code != "length" {
			t.Fatalf("CheckBlocks = %+v", errs)
		}
	})
}

package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/coachd/coachd"
)

// TestHistoryCacheCountsPDFPagesOnce: a PDF read from the store (a row
// stored before blocks kept their page count, or read by another replica)
// is counted once, as the session is cached, and its block keeps the
// count (coachd.LearnAttachment): the turns after it build their history
// without parsing it.
func TestHistoryCacheCountsPDFPagesOnce(t *testing.T) {
	ctx := context.Background()
	db, _, u, sess := fixtureUser(t)
	pdf := []byte("%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Count 2 >> endobj\n" +
		"3 0 obj << /Type /Page >> endobj 4 0 obj << /Type /Page >> endobj 5 0 obj << /Type /Page >> endobj\ntrailer << /Root 1 0 R >>\n")
	old := coachd.AttachmentBlock(coachd.MediaPDF, "report.pdf", pdf) // no count kept
	photo := coachd.AttachmentBlock(coachd.MediaJPEG, "", []byte("\xff\xd8\xff"+strings.Repeat("a", 1<<20)))
	if err := db.AppendMessages(ctx, u.ID, sess.ID, []*coachd.Message{
		{Role: coachd.RoleUser, Blocks: []coachd.Block{old, photo, coachd.TextBlock("my report")}},
		{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("read")}},
	}); err != nil {
		t.Fatal(err)
	}
	c := newHistoryCache()
	for _, read := range []string{"from the store", "from the cache"} {
		_, msgs, err := c.loadTurn(ctx, db, u.ID, sess.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !coachd.AttachmentLearned(msgs[0].Blocks[0]) {
			t.Errorf("%s: the PDF's facts are not kept: every turn reads it again", read)
		}
		if !coachd.AttachmentLearned(msgs[0].Blocks[1]) {
			t.Errorf("%s: the photo's facts are not kept: every turn reads its size again", read)
		}
		if got := coachd.AttachmentPages(msgs[0].Blocks[0]); got != 2 {
			t.Errorf("%s: the PDF's Pages = %d, want 2 (its page tree's count)", read, got)
		}
	}
}

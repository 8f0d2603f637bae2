package agent_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
)

func TestHistoryLimitsAttachments(t *testing.T) {
	// PDFs of a page: text documents have a tighter bound of their own
	// (TestHistoryLimitsTextDocuments).
	doc := coachd.AttachmentBlock(coachd.MediaPDF, "old.txt", append([]byte("%PDF-1.4\n"), bytes.Repeat([]byte("a"), 3<<19-9)...)) // 2 MiB as base64
	var msgs []*coachd.Message
	for i := range 12 {
		msgs = append(msgs,
			&coachd.Message{Role: coachd.RoleUser, Blocks: []coachd.Block{doc, doc, coachd.TextBlock("look")}},
			&coachd.Message{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("seen " + string(rune('a'+i)))}})
	}
	h := agent.History(msgs, nil)
	sent, notes := 0, 0
	for _, m := range h {
		for _, b := range m.Blocks {
			if b.Type == coachd.BlockDocument {
				sent++
			}
			if b.Type == coachd.BlockText && strings.Contains(b.Text, `attachment "old.txt"`) {
				notes++
			}
		}
	}
	// 2 MiB each: ten fit in 20 MiB; the 11th, 17th and 23rd drop the
	// window to 10 MiB (five), so the newest six are sent.
	if sent != 6 || notes != 18 {
		t.Fatalf("sent %d attachments and %d notes, want 6 and 18", sent, notes)
	}
	if last := h[len(h)-2].Blocks; last[0].Type != coachd.BlockDocument {
		t.Fatalf("the newest message's attachment was not sent: %+v", last[0])
	}
	if msgs[0].Blocks[0].Type != coachd.BlockDocument {
		t.Fatal("History changed a stored message")
	}
}

func TestEstimateTokensAttachments(t *testing.T) {
	img := coachd.AttachmentBlock(coachd.MediaPNG, "", bytes.Repeat([]byte{0}, 3<<20))
	pdf := coachd.AttachmentBlock(coachd.MediaPDF, "a.pdf", []byte("%PDF-1.4 /Type /Pages /Type /Page x /Type/Page y"))
	req := &coachd.ModelRequest{Messages: []coachd.ModelMessage{{Role: coachd.RoleUser, Blocks: []coachd.Block{img, pdf, coachd.TextBlock("hi")}}}}
	got := agent.EstimateTokens(req)
	// One image and two pages, plus a little JSON: not millions of
	// tokens for 4 MiB of base64.
	if got < 1600+2*2500 || got > 1600+2*2500+200 {
		t.Fatalf("EstimateTokens = %d", got)
	}
}

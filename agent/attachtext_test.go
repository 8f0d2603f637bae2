package agent_test

import (
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
)

// TestHistoryLimitsTextDocuments: text documents are re-sent as tokens,
// and the window counted them only by bytes against 20 MiB: six of 90
// KiB of Chinese (about 180,000 tokens) went back on every turn, past the
// model's context with the rest of the conversation. The window holds at
// most coachd.MaxHistoryTextBytes of them; past it the oldest become
// notes down to half of it, as photos past their bounds do.
func TestHistoryLimitsTextDocuments(t *testing.T) {
	doc := coachd.AttachmentBlock(coachd.MediaText, "chapter.txt", []byte(strings.Repeat("漢", 90<<10/3)))
	var msgs []*coachd.Message
	for range 6 {
		msgs = append(msgs,
			&coachd.Message{Role: coachd.RoleUser, Blocks: []coachd.Block{doc, coachd.TextBlock("read this")}},
			&coachd.Message{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("read")}})
	}
	h := agent.History(msgs, nil)
	sent, notes, text := 0, 0, 0
	for _, m := range h {
		for _, b := range m.Blocks {
			if b.Type == coachd.BlockDocument {
				sent++
				text += coachd.AttachmentSentLen(b)
			}
			if b.Type == coachd.BlockText && strings.Contains(b.Text, `attachment "chapter.txt"`) {
				notes++
			}
		}
	}
	// 90 KiB each: two fit in 200 KiB; the third and fifth drop the
	// window to 100 KiB (one), so the newest two are sent.
	if sent != 2 || notes != 4 || text > coachd.MaxHistoryTextBytes {
		t.Fatalf("sent %d text documents (%d bytes) and %d notes, want 2 and 4", sent, text, notes)
	}
	if last := h[len(h)-2].Blocks; last[0].Type != coachd.BlockDocument {
		t.Fatalf("the newest message's document was not sent: %+v", last[0])
	}
}

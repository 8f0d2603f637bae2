package agent_test

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
)

// allocated is how many bytes f allocates.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestHistoryAttachmentsNotCopied: a session's newest 20 phone photos of
// 700 KB are 19 MB of base64, re-sent every round. Building the round's
// history and its estimate read each photo's size by decoding its source
// whole, a copy of its base64, several times: about 60 MB of garbage per
// round for sizes alone. They read the sizes without copying the data.
func TestHistoryAttachmentsNotCopied(t *testing.T) {
	var msgs []*coachd.Message
	for i := range agent.MaxHistoryAttachments {
		photo := coachd.AttachmentBlock(coachd.MediaJPEG, "", bytes.Repeat([]byte{byte(i)}, 700<<10))
		msgs = append(msgs, &coachd.Message{Role: coachd.RoleUser, Blocks: []coachd.Block{photo, coachd.TextBlock("today's")}},
			&coachd.Message{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("noted")}})
	}
	var h []coachd.ModelMessage
	if n := allocated(func() { h = agent.History(msgs, nil) }); n > 4<<20 {
		t.Errorf("History allocated %d MB for the sizes of %d photos", n>>20, len(msgs)/2)
	}
	if n := allocated(func() { agent.EstimateTokens(&coachd.ModelRequest{Messages: h}) }); n > 4<<20 {
		t.Errorf("EstimateTokens allocated %d MB for the sizes of %d photos", n>>20, len(msgs)/2)
	}
	images := 0
	for _, m := range h {
		for _, b := range m.Blocks {
			if b.Type == coachd.BlockImage {
				images++
			}
		}
	}
	if images != agent.MaxHistoryAttachments {
		t.Fatalf("History sent %d photos, want %d", images, agent.MaxHistoryAttachments)
	}
}

// TestPDFPagesNotCopied: a PDF is priced by its pages, which every round
// counted by decoding the whole PDF from its source (a copy of its
// base64, then of its bytes): 32 MB for 20 PDFs of 700 KB in one
// estimate, and compaction's check does it twice a request. The pages are
// counted from the base64 as it is streamed, and as many as before,
// wherever they fall.
func TestPDFPagesNotCopied(t *testing.T) {
	page := []byte("\n3 0 obj << /Type /Page /Parent 2 0 R >> endobj\n")
	var msgs []coachd.ModelMessage
	for i := range agent.MaxHistoryAttachments {
		pdf := []byte("%PDF-1.4\n1 0 obj << /Type /Pages /Count 3 >> endobj")
		for range 3 { // three pages, spread through 700 KB
			pdf = append(append(pdf, bytes.Repeat([]byte{byte('a' + i)}, 233<<10+i*7)...), page...)
		}
		msgs = append(msgs, coachd.ModelMessage{Role: coachd.RoleUser, Blocks: []coachd.Block{
			coachd.AttachmentBlock(coachd.MediaPDF, "statement.pdf", pdf), coachd.TextBlock("this week's")}},
			coachd.ModelMessage{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("noted")}})
	}
	req := &coachd.ModelRequest{Messages: msgs}
	var got int64
	if n := allocated(func() { got = agent.EstimateTokens(req) }); n > 4<<20 {
		t.Errorf("EstimateTokens allocated %d MB for the pages of %d PDFs", n>>20, agent.MaxHistoryAttachments)
	}
	if want := int64(agent.MaxHistoryAttachments * 3 * 2500); got < want || got > want+2000 {
		t.Errorf("EstimateTokens = %d, want %d for 3 pages a PDF and a little text", got, want)
	}
}

package agent_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
)

// reportPDF is a PDF of 3 pages and about 700 KB.
func reportPDF(i int) []byte {
	pdf := []byte("%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Count 3 >> endobj\n")
	for p := range 3 {
		pdf = append(pdf, bytes.Repeat([]byte{byte('a' + i)}, 233<<10+i*7)...)
		pdf = fmt.Appendf(pdf, "\n%d 0 obj << /Type /Page /Parent 2 0 R >> endobj\n", p+3)
	}
	return append(pdf, "trailer << /Root 1 0 R >>\n%%EOF\n"...)
}

// pdfHistory is a session of n accepted PDFs, as a turn holds it.
func pdfHistory(tb testing.TB, n int, accept func(data []byte) coachd.Block) []*coachd.Message {
	var msgs []*coachd.Message
	for i := range n {
		msgs = append(msgs, &coachd.Message{Role: coachd.RoleUser, Blocks: []coachd.Block{accept(reportPDF(i)), coachd.TextBlock("this week's")}},
			&coachd.Message{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("noted")}})
	}
	return msgs
}

func acceptPDF(tb testing.TB) func([]byte) coachd.Block {
	return func(data []byte) coachd.Block {
		b, fe := coachd.AcceptAttachment(coachd.MediaPDF, "report.pdf", data)
		if fe != nil {
			tb.Fatal(fe)
		}
		return b
	}
}

// TestHistoryPDFPagesNotReparsed: every turn's history and estimate
// counted each PDF's pages again, parsing megabytes of base64 (about 5 ms
// a 3 MiB PDF, twice a round), though the count was found when the PDF
// was accepted. An accepted PDF's block keeps it (LearnAttachment): building a
// history of 20 PDFs and its estimate parses none of them.
func TestHistoryPDFPagesNotReparsed(t *testing.T) {
	msgs := pdfHistory(t, agent.MaxHistoryAttachments, acceptPDF(t))
	var h []coachd.ModelMessage
	var got int64
	n := allocated(func() {
		h = agent.History(msgs, nil)
		got = agent.EstimateTokens(&coachd.ModelRequest{Messages: h})
	})
	if n > 256<<10 {
		t.Errorf("History and EstimateTokens allocated %d KB for %d PDFs: their pages were counted again", n>>10, agent.MaxHistoryAttachments)
	}
	if want := int64(agent.MaxHistoryAttachments * 3 * 2500); got < want || got > want+2000 {
		t.Errorf("EstimateTokens = %d, want %d for 3 pages a PDF and a little text", got, want)
	}
}

func BenchmarkHistoryPDF(b *testing.B) {
	for _, tc := range []struct {
		name   string
		accept func([]byte) coachd.Block
	}{
		{"Accepted", acceptPDF(b)},
		{"Unknown", func(data []byte) coachd.Block { return coachd.AttachmentBlock(coachd.MediaPDF, "report.pdf", data) }},
	} {
		msgs := pdfHistory(b, agent.MaxHistoryAttachments, tc.accept)
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				agent.EstimateTokens(&coachd.ModelRequest{Messages: agent.History(msgs, nil)})
			}
		})
	}
}

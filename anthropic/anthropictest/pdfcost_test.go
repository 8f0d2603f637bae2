package anthropictest_test

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// pdfOf builds a PDF of pages pages, each showing text (its content
// stream Flate-compressed, as most PDFs are) and, when scan is set,
// holding a 1 MB scanned image stream as well.
func pdfOf(t *testing.T, pages int, text string, scan bool) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n1 0 obj << /Type /Pages /Count " + fmt.Sprint(pages) + " >> endobj\n")
	for i := range pages {
		var z bytes.Buffer
		w := zlib.NewWriter(&z)
		fmt.Fprintf(w, "BT /F1 12 Tf 72 720 Td (%s) Tj ET", text)
		w.Close()
		fmt.Fprintf(&b, "%d 0 obj << /Type /Page /Parent 1 0 R /Contents %d 0 R >> endobj\n", 2+2*i, 3+2*i)
		fmt.Fprintf(&b, "%d 0 obj << /Length %d /Filter /FlateDecode >>\nstream\n", 3+2*i, z.Len())
		b.Write(z.Bytes())
		b.WriteString("\nendstream\nendobj\n")
	}
	if scan {
		img := bytes.Repeat([]byte{0xd7, 0x3a, 0x91, 0x05}, 1<<18)
		fmt.Fprintf(&b, "99 0 obj << /Type /XObject /Subtype /Image /Length %d /Filter /DCTDecode >>\nstream\n", len(img))
		b.Write(img)
		b.WriteString("\nendstream\nendobj\n")
	}
	b.WriteString("%%EOF\n")
	return b.Bytes()
}

// TestPDFTokens: the API bills a PDF by its pages, each its extracted
// text plus the page as an image (docs: PDF support, "Estimate your
// costs"); the fake billed the base64's length: a scanned page of 1 MB
// was 350,000 tokens, a text page of a few hundred bytes 100 or so.
func TestPDFTokens(t *testing.T) {
	srv := anthropictest.NewServer()
	defer srv.Close()
	body := func(pdf []byte) string {
		doc := ""
		if pdf != nil {
			doc = `{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"` + base64.StdEncoding.EncodeToString(pdf) + `"}},`
		}
		return `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[` + doc + `{"type":"text","text":"what is this?"}]}]}`
	}
	_, _, b := post(t, srv, "/v1/messages", body(nil), nil)
	text := usageOf(t, b).InputTokens
	words := strings.Repeat("weekly earnings 412.50 ", 40) // 920 bytes: 230 tokens
	for _, tt := range []struct {
		name     string
		pdf      []byte
		min, max int64
	}{
		{"TextPage", pdfOf(t, 1, words, false), 1600 + 230, 1600 + 230},
		{"ThreePages", pdfOf(t, 3, words, false), 3 * (1600 + 230), 3 * (1600 + 230)},
		{"ScannedPage", pdfOf(t, 1, "", true), 1600, 1600},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, _, b := post(t, srv, "/v1/messages", body(tt.pdf), nil)
			if status != 200 {
				t.Fatalf("%d %.300s", status, b)
			}
			// The block's JSON around the data costs a few tokens more.
			got := usageOf(t, b).InputTokens - text
			if got < tt.min || got > tt.max+25 {
				t.Fatalf("PDF billed %d tokens, want %d..%d (+ its block's few); its base64 is %d bytes", got, tt.min, tt.max, len(tt.pdf)*4/3)
			}
		})
	}
}

package coachd_test

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/coachd/coachd"
)

// pdfObjects are the catalog (1), the page tree (2) and n pages (3…).
func pdfObjects(n int) []string {
	kids := make([]string, n)
	for i := range kids {
		kids[i] = fmt.Sprintf("%d 0 R", i+3)
	}
	objs := []string{"<< /Type /Catalog /Pages 2 0 R >>",
		fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), n)}
	for range n {
		objs = append(objs, "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents (a \\) page) >>")
	}
	return objs
}

// classicPDF is a PDF 1.4 of n pages: objects in the open, a
// cross-reference table and a trailer.
func classicPDF(n int) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	var offs []int
	for i, o := range pdfObjects(n) {
		offs = append(offs, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offs)+1)
	for _, off := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offs)+1, xref)
	return b.Bytes()
}

func deflate(data []byte) []byte {
	var b bytes.Buffer
	w := zlib.NewWriter(&b)
	w.Write(data)
	w.Close()
	return b.Bytes()
}

// objStmPDF is a PDF 1.5 of n pages as most tools write one now: every
// object in a compressed object stream, found through a cross-reference
// stream. No "/Type /Page" is in its bytes.
func objStmPDF(n int) []byte {
	objs := pdfObjects(n)
	var head, body bytes.Buffer
	for i, o := range objs {
		fmt.Fprintf(&head, "%d %d ", i+1, body.Len())
		body.WriteString(o + "\n")
	}
	stm := deflate(append(head.Bytes(), body.Bytes()...))
	var b bytes.Buffer
	b.WriteString("%PDF-1.5\n%\xe2\xe3\xcf\xd3\n")
	stmNum, xrefNum := len(objs)+1, len(objs)+2
	stmOff := b.Len()
	fmt.Fprintf(&b, "%d 0 obj\n<< /Type /ObjStm /N %d /First %d /Length %d /Filter /FlateDecode >>\nstream\n", stmNum, len(objs), head.Len(), len(stm))
	b.Write(stm)
	b.WriteString("\nendstream\nendobj\n")
	xrefOff := b.Len()
	var rows bytes.Buffer
	row := func(typ byte, f2 uint32, f3 uint16) {
		rows.WriteByte(typ)
		binary.Write(&rows, binary.BigEndian, f2)
		binary.Write(&rows, binary.BigEndian, f3)
	}
	row(0, 0, 65535)
	for i := range objs {
		row(2, uint32(stmNum), uint16(i))
	}
	row(1, uint32(stmOff), 0)
	row(1, uint32(xrefOff), 0)
	xs := deflate(rows.Bytes())
	fmt.Fprintf(&b, "%d 0 obj\n<< /Type /XRef /Size %d /W [1 4 2] /Root 1 0 R /Length %d /Filter /FlateDecode >>\nstream\n", xrefNum, xrefNum+1, len(xs))
	b.Write(xs)
	fmt.Fprintf(&b, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", xrefOff)
	return b.Bytes()
}

// TestPDFPagesObjectStreams: a PDF 1.5+ keeps its page objects in
// compressed object streams, where counting "/Type /Page" in the bytes
// found none: a PDF of 150 pages was one page, passed the 100-page
// limit, and then the API refused every later turn of the session. The
// page tree's /Count is read through the object streams.
func TestPDFPagesObjectStreams(t *testing.T) {
	pdf := objStmPDF(150)
	if bytes.Contains(pdf, []byte("/Page ")) {
		t.Fatal("the test PDF shows its pages")
	}
	if got := coachd.PDFPages(pdf); got != 150 {
		t.Errorf("PDFPages = %d, want 150", got)
	}
	if got := coachd.AttachmentPages(coachd.AttachmentBlock(coachd.MediaPDF, "a.pdf", pdf)); got != 150 {
		t.Errorf("AttachmentPages = %d, want 150", got)
	}
	fe := coachd.CheckAttachment(coachd.MediaPDF, pdf)
	if fe == nil || !strings.Contains(fe.Message, "has 150 pages") {
		t.Errorf("CheckAttachment of 150 pages = %v, want refused for its pages", fe)
	}
	if fe := coachd.CheckAttachment(coachd.MediaPDF, objStmPDF(100)); fe != nil {
		t.Errorf("CheckAttachment of 100 pages = %v, want accepted", fe)
	}
}

// TestPDFPagesTree: the count is the page tree's, of the newest trailer,
// direct or in object streams; a file that cannot be read so is counted
// by its page objects, as before, and none makes the counter fail.
func TestPDFPagesTree(t *testing.T) {
	classic := classicPDF(3)
	// An incremental update that drops a page: the old page object stays
	// in the file, the newest page tree says 2.
	update := fmt.Appendf(append([]byte(nil), classic...), "2 0 obj\n<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>\nendobj\n"+
		"xref\n0 1\n0000000000 65535 f \ntrailer\n<< /Size 6 /Root 1 0 R /Prev 9 >>\nstartxref\n%d\n%%%%EOF\n", len(classic))
	stm := objStmPDF(150)
	bomb := []byte("%PDF-1.5\n1 0 obj << /Type /ObjStm /N 1 /First 4 /Filter /FlateDecode >>\nstream\n")
	bomb = append(bomb, deflate(make([]byte, 64<<20))...)
	bomb = append(bomb, "\nendstream endobj\n2 0 obj << /Type /XRef /Root 3 0 R >> endobj\n"...)
	for _, tc := range []struct {
		name string
		pdf  []byte
		want int
	}{
		{"Classic", classicPDF(120), 120},
		{"Update", update, 2},
		{"TruncatedObjStm", stm[:len(stm)/2], 1},                        // no trailer left: no page objects, one page
		{"TruncatedClassic", classicPDF(7)[:len(classicPDF(7))-300], 7}, // page objects
		{"RefLoop", []byte("%PDF-1.4\n1 0 obj << /Pages 1 0 R >> endobj\n2 0 obj 2 0 R endobj trailer << /Root 1 0 R >>"), 1},
		{"CountRefLoop", []byte("%PDF-1.4\n1 0 obj << /Pages 3 0 R >> endobj\n2 0 obj 2 0 R endobj\n3 0 obj << /Count 2 0 R >> endobj trailer << /Root 1 0 R >>"), 1},
		{"Nested", []byte("%PDF-1.4\n1 0 obj << /Pages " + strings.Repeat("[", 1<<16) + " >> endobj trailer << /Root 1 0 R >>"), 1},
		{"HugeCount", []byte("%PDF-1.4\n1 0 obj << /Pages 2 0 R >> endobj 2 0 obj << /Count 99999999999999999999 >> endobj trailer << /Root 1 0 R >>"), 1},
		{"Bomb", bomb, 1},
		{"Blank", []byte("%PDF-"), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := coachd.PDFPages(tc.pdf); got != tc.want {
				t.Errorf("PDFPages = %d, want %d", got, tc.want)
			}
			if got := coachd.AttachmentPages(coachd.AttachmentBlock(coachd.MediaPDF, "", tc.pdf)); got != tc.want {
				t.Errorf("AttachmentPages = %d, want %d", got, tc.want)
			}
		})
	}
	t.Run("BombBounded", func(t *testing.T) {
		var a, b runtime.MemStats
		runtime.ReadMemStats(&a)
		coachd.PDFPages(bomb)
		runtime.ReadMemStats(&b)
		if n := b.TotalAlloc - a.TotalAlloc; n > 16<<20 {
			t.Errorf("PDFPages of a 64 MiB object stream allocated %d MiB", n>>20)
		}
	})
}

// FuzzPDFPages: the page counter reads any bytes without a panic, within
// its caps, and reads a file and its base64 block alike.
func FuzzPDFPages(f *testing.F) {
	f.Add(classicPDF(2))
	f.Add(objStmPDF(3))
	f.Fuzz(func(t *testing.T, pdf []byte) {
		var a, b runtime.MemStats
		runtime.ReadMemStats(&a)
		n := coachd.PDFPages(pdf)
		runtime.ReadMemStats(&b)
		if alloc := b.TotalAlloc - a.TotalAlloc; alloc > 16<<20+4*uint64(len(pdf)) {
			t.Fatalf("PDFPages of %d bytes allocated %d MiB", len(pdf), alloc>>20)
		}
		if n < 0 {
			t.Fatalf("PDFPages = %d", n)
		}
		if got := coachd.AttachmentPages(coachd.AttachmentBlock(coachd.MediaPDF, "", pdf)); got != n {
			t.Fatalf("AttachmentPages = %d, PDFPages = %d", got, n)
		}
	})
}

// TestCheckAttachmentEncryptedPDF: the API reads only standard PDFs, not
// encrypted or password-protected ones, and refuses a request with one:
// stored, such a PDF failed its turn and every later turn of the session.
// A PDF whose newest trailer names an /Encrypt dictionary is refused.
func TestCheckAttachmentEncryptedPDF(t *testing.T) {
	encrypt := func(pdf []byte) []byte { // the trailer or cross-reference stream names the catalog
		return bytes.Replace(pdf, []byte("/Root 1 0 R"), []byte("/Encrypt 99 0 R /ID [<00><00>] /Root 1 0 R"), 1)
	}
	for _, tc := range []struct {
		name string
		pdf  []byte
	}{
		{"Classic", encrypt(classicPDF(2))},
		{"XRefStream", encrypt(objStmPDF(2))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fe := coachd.CheckAttachment(coachd.MediaPDF, tc.pdf)
			if fe == nil || fe.Field != "data" || fe.Code != "format" || !strings.Contains(fe.Message, "encrypted") {
				t.Fatalf("CheckAttachment = %+v, want a format error saying it is encrypted", fe)
			}
		})
	}
	if fe := coachd.CheckAttachment(coachd.MediaPDF, classicPDF(2)); fe != nil {
		t.Fatalf("CheckAttachment of a standard PDF = %+v", fe)
	}
}

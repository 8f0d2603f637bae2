package coachd

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"runtime"
	"testing"
)

// omitAttachmentDataDecoded is OmitAttachmentData as it was: each
// attachment's source decoded whole (a copy of its data, and of a PDF's
// bytes) for what a decode of its head tells.
func omitAttachmentDataDecoded(blocks []Block) (out []Block, ok bool) {
	for i, b := range blocks {
		typ, n, isAtt := AttachmentInfo(b)
		if !isAtt || AttachmentOmitted(b) {
			continue
		}
		var s blockSource
		_ = json.Unmarshal(b.Source, &s)
		o := omittedSource{Type: sourceOmitted, MediaType: typ, Bytes: n, Sent: len(s.Data)}
		if typ == MediaPDF {
			raw, _ := base64.StdEncoding.DecodeString(s.Data)
			o.Pages = PDFPages(raw)
		}
		if out == nil {
			out = append([]Block(nil), blocks...)
		}
		b.Source, _ = json.Marshal(o)
		out[i] = b
	}
	return out, out != nil
}

// FuzzOmitAttachmentData: OmitAttachmentData, which reads a source's
// head (and a PDF's pages in place), leaves what the whole decode did.
func FuzzOmitAttachmentData(f *testing.F) {
	pdf := []byte("%PDF-1.4\n1 0 obj << /Type /Page >> endobj\n2 0 obj << /Type /Page >> endobj")
	for _, s := range []string{
		string(AttachmentBlock(MediaPNG, "", []byte("\x89PNG\r\n\x1a\nxx")).Source),
		string(AttachmentBlock(MediaPDF, "a.pdf", pdf).Source),
		string(AttachmentBlock(MediaText, "a.txt", []byte("line\n\"quoted\" é")).Source),
		`{"data":"JVBERi0x\nLjQK","media_type":"application/pdf","type":"base64"}`,
		`{"data":"JVBER\u0069","media_type":"application/pdf","type":"base64"}`,
		`{"data":"JVBERi0x!!LjQK","media_type":"application/pdf","type":"base64"}`,
		`{"type":"text","media_type":"application/pdf","data":"%PDF /Type /Page x"}`,
		`{"data":null,"media_type":"image/png","type":"base64"}`,
		`{"data":"QUJD","DATA":"QQ==","media_type":"image/png"}`,
		`{"type":"omitted","media_type":"image/png","bytes":3,"sent":4}`,
		`{"data":1}`,
		`[]`,
	} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, src string, image bool) {
		b := Block{Type: BlockDocument, Source: json.RawMessage(src)}
		if image {
			b.Type = BlockImage
		}
		blocks := []Block{TextBlock("hi"), b}
		got, ok := OmitAttachmentData(blocks)
		want, wantOK := omitAttachmentDataDecoded(blocks)
		gotJSON, _ := json.Marshal(got)
		wantJSON, _ := json.Marshal(want)
		if ok != wantOK || !bytes.Equal(gotJSON, wantJSON) {
			t.Fatalf("OmitAttachmentData = %s, %v; decoded whole %s, %v", gotJSON, ok, wantJSON, wantOK)
		}
	})
}

// TestOmitAttachmentDataNoCopy: storing a 3 MiB photo, OmitAttachmentData
// decoded its source whole to leave its data out: a 4 MiB copy of its
// base64 for a length a read of its head tells.
func TestOmitAttachmentDataNoCopy(t *testing.T) {
	photo := AttachmentBlock(MediaJPEG, "", append([]byte("\xff\xd8\xff"), bytes.Repeat([]byte("x"), 3<<20)...))
	blocks := []Block{photo, TextBlock("this one?")}
	OmitAttachmentData(blocks)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	OmitAttachmentData(blocks)
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<10 {
		t.Errorf("OmitAttachmentData allocated %d KB for a 3 MiB photo", got>>10)
	}
}

// BenchmarkOmitAttachmentData is storing a message with a 3 MiB photo:
// its lite copy, without the data (OmitAttachmentData).
func BenchmarkOmitAttachmentData(b *testing.B) {
	photo := AttachmentBlock(MediaJPEG, "", append([]byte("\xff\xd8\xff"), bytes.Repeat([]byte("x"), 3<<20)...))
	blocks := []Block{photo, TextBlock("this one?")}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := OmitAttachmentData(blocks); !ok {
			b.Fatal("nothing omitted")
		}
	}
}

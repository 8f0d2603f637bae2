package coachd_test

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

// photo is an accepted 3 MiB JPEG: what a history re-sends on each turn.
func photo(tb testing.TB) coachd.Block {
	tb.Helper()
	b, fe := coachd.AcceptAttachment(coachd.MediaJPEG, "", photoData(tb))
	if fe != nil {
		tb.Fatal(fe)
	}
	return b
}

// photoData is a small JPEG made 3 MiB long.
func photoData(tb testing.TB) []byte {
	img := encodeImage(tb, coachd.MediaJPEG, 2, 2)
	return append(img, strings.Repeat("a", coachd.MaxAttachmentBytes-len(img))...)
}

// TestAttachmentFacts: an accepted photo's media type, sizes and AsIs
// are read from its source once, and a copy whose Source is replaced
// never answers with the facts of the source it had.
func TestAttachmentFacts(t *testing.T) {
	wantType, wantSize, wantSent, _ := coachd.AttachmentSizes(coachd.AttachmentBlock(coachd.MediaJPEG, "", photoData(t)))
	t.Run("ReadOnce", func(t *testing.T) {
		b := photo(t)
		// Sources are never changed in place: one that is shows whether
		// a size is read again from it.
		i := bytes.Index(b.Source, []byte(coachd.MediaJPEG))
		copy(b.Source[i:], coachd.MediaWebP)
		typ, size, sent, ok := coachd.AttachmentSizes(b)
		if !ok || typ != wantType || size != wantSize || sent != wantSent {
			t.Fatalf("AttachmentSizes = %q %d %d %v; want %q %d %d, read when accepted", typ, size, sent, ok, wantType, wantSize, wantSent)
		}
		c := b // a copy with the same source
		if typ, _, _ := coachd.AttachmentInfo(c); typ != wantType {
			t.Fatalf("copy's type = %q; want %q", typ, wantType)
		}
	})
	t.Run("NewSourceSameLength", func(t *testing.T) {
		b := photo(t)
		c := b
		c.Source = bytes.Replace(bytes.Clone(b.Source), []byte(coachd.MediaJPEG), []byte(coachd.MediaWebP), 1)
		if coachd.AttachmentLearned(c) || !coachd.AttachmentLearned(b) {
			t.Fatal("the copy's new source is learned, or the original's is not")
		}
		if typ, _, _ := coachd.AttachmentInfo(c); typ != coachd.MediaWebP {
			t.Fatalf("type = %q; want %q, its own source's", typ, coachd.MediaWebP)
		}
		if typ, _, _ := coachd.AttachmentInfo(b); typ != coachd.MediaJPEG {
			t.Fatalf("original's type = %q; want %q", typ, coachd.MediaJPEG)
		}
	})
	t.Run("NewSourceNotAsIs", func(t *testing.T) {
		b := photo(t)
		if !b.AsIs() {
			t.Fatal("accepted photo not AsIs")
		}
		c := b
		c.Source = append(json.RawMessage(" "), b.Source[:len(b.Source)-1]...)
		c.Source = append(c.Source, '}')
		if c.AsIs() {
			t.Fatal("a copy with an indented source is AsIs")
		}
		if _, _, sent, ok := coachd.AttachmentSizes(c); !ok || sent != wantSent {
			t.Fatalf("copy's sent = %d %v; want %d", sent, ok, wantSent)
		}
	})
	t.Run("Omitted", func(t *testing.T) {
		b := photo(t)
		out, ok := coachd.OmitAttachmentData([]coachd.Block{b})
		if !ok || !coachd.AttachmentOmitted(out[0]) || coachd.AttachmentLearned(out[0]) {
			t.Fatal("not omitted, or it keeps the photo's facts")
		}
		if typ, size, sent, ok := coachd.AttachmentSizes(out[0]); !ok || typ != wantType || size != wantSize || sent != wantSent {
			t.Fatalf("omitted AttachmentSizes = %q %d %d %v", typ, size, sent, ok)
		}
		if sent, _ := coachd.OmittedSizes(out[0]); sent != wantSent {
			t.Fatalf("OmittedSizes sent = %d; want %d", sent, wantSent)
		}
		if !out[0].AsIs() {
			t.Fatal("omitted block not AsIs")
		}
	})
	t.Run("OldSourceNotKept", func(t *testing.T) {
		// A copy without the data (OmitAttachmentData) does not keep the
		// photo's megabytes alive through its facts.
		b := photo(t)
		freed := make(chan struct{})
		runtime.AddCleanup(&b.Source[0], func(ch chan struct{}) { close(ch) }, freed)
		out, _ := coachd.OmitAttachmentData([]coachd.Block{b})
		b = coachd.Block{}
		timeout := time.After(10 * time.Second)
		for {
			runtime.GC()
			select {
			case <-freed:
				runtime.KeepAlive(out)
				return
			case <-timeout:
				t.Fatal("the omitted copy keeps the photo's source alive")
			default:
				runtime.Gosched()
			}
		}
	})
}

// TestLearnAttachment: facts learned of a stored block (the history
// cache's) are its source's, with a PDF's page count.
func TestLearnAttachment(t *testing.T) {
	pdf := coachd.AttachmentBlock(coachd.MediaPDF, "r.pdf", []byte("%PDF-1.4\n1 0 obj << /Type /Page >> endobj\n2 0 obj << /Type /Page >> endobj\n3 0 obj << /Type /Page >> endobj\n"))
	if coachd.AttachmentLearned(pdf) {
		t.Fatal("learned before LearnAttachment")
	}
	coachd.LearnAttachment(&pdf)
	if !coachd.AttachmentLearned(pdf) {
		t.Fatal("not learned")
	}
	if got := coachd.AttachmentPages(pdf); got != 3 {
		t.Fatalf("AttachmentPages = %d; want 3", got)
	}
	c := pdf
	c.Source = coachd.AttachmentBlock(coachd.MediaPDF, "r.pdf", []byte("%PDF-1.4\n1 0 obj << /Type /Page >> endobj\n")).Source
	if coachd.AttachmentLearned(c) || coachd.AttachmentPages(c) != 1 {
		t.Fatalf("a copy with another PDF: learned %v, pages %d; want false, 1", coachd.AttachmentLearned(c), coachd.AttachmentPages(c))
	}
	if typ, _, ok := coachd.AttachmentInfo(pdf); !ok || typ != coachd.MediaPDF {
		t.Fatalf("type = %q %v", typ, ok)
	}
	text := coachd.TextBlock("hi")
	coachd.LearnAttachment(&text)
	if _, _, ok := coachd.AttachmentInfo(text); ok {
		t.Fatal("a text block is an attachment")
	}
}

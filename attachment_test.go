package coachd_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"

	"github.com/coachd/coachd"
)

func encodeImage(tb testing.TB, typ string, w, h int) []byte {
	tb.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	var buf bytes.Buffer
	var err error
	switch typ {
	case coachd.MediaPNG:
		err = png.Encode(&buf, img)
	case coachd.MediaJPEG:
		err = jpeg.Encode(&buf, img, nil)
	case coachd.MediaGIF:
		err = gif.Encode(&buf, img, nil)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// webpBytes is the header of a lossless 1×1 WebP.
var webpBytes = []byte("RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00")

func TestSniffMediaType(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"png", encodeImage(t, coachd.MediaPNG, 2, 2), coachd.MediaPNG},
		{"jpeg", encodeImage(t, coachd.MediaJPEG, 2, 2), coachd.MediaJPEG},
		{"gif", encodeImage(t, coachd.MediaGIF, 2, 2), coachd.MediaGIF},
		{"webp", webpBytes, coachd.MediaWebP},
		{"pdf", []byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n"), coachd.MediaPDF},
		{"text", []byte("Notes from today's shift\n\tSurge at 5pm.\r\n"), coachd.MediaText},
		{"html counts as text", []byte("<html><script>alert(1)</script></html>"), coachd.MediaText},
		{"utf8 bom", []byte("\uFEFFbonjour"), coachd.MediaText},
		{"empty", nil, ""},
		{"nul", []byte("a\x00b"), ""},
		{"escape", []byte("a\x1b[31mb"), ""},
		{"bidi override", []byte("a\u202Egnp.exe"), ""},
		{"latin1", []byte("caf\xe9"), ""},
		{"zip", []byte("PK\x03\x04\x14\x00\x00\x00"), ""},
		{"elf", []byte("\x7fELF\x02\x01\x01\x00"), ""},
		{"riff but wav", []byte("RIFF\x1a\x00\x00\x00WAVEfmt "), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := coachd.SniffMediaType(tc.data); got != tc.want {
				t.Fatalf("SniffMediaType = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCheckAttachment(t *testing.T) {
	img := encodeImage(t, coachd.MediaPNG, 3, 3)
	t.Run("OK", func(t *testing.T) {
		if err := coachd.CheckAttachment(coachd.MediaPNG, img); err != nil {
			t.Fatal(err)
		}
	})
	for name, tc := range map[string]struct {
		typ   string
		data  []byte
		field string
	}{
		"ErrSpoofed":   {coachd.MediaJPEG, img, "media_type"},
		"ErrTextAsPDF": {coachd.MediaPDF, []byte("hello"), "media_type"},
		"ErrUnknown":   {coachd.MediaPNG, []byte("\x7fELF\x02\x01"), "data"},
		"ErrEmpty":     {coachd.MediaText, nil, "data"},
		"ErrTooBig":    {coachd.MediaText, bytes.Repeat([]byte("a"), coachd.MaxAttachmentBytes+1), "data"},
		"ErrCorrupt":   {coachd.MediaPNG, append([]byte("\x89PNG\x0d\x0a\x1a\x0a"), make([]byte, 20)...), "data"},
		"ErrHuge":      {coachd.MediaPNG, encodeImage(t, coachd.MediaPNG, coachd.MaxImageSide+1, 1), "data"},
	} {
		t.Run(name, func(t *testing.T) {
			err := coachd.CheckAttachment(tc.typ, tc.data)
			if err == nil || err.Field != tc.field {
				t.Fatalf("CheckAttachment = %+v, want an error on %s", err, tc.field)
			}
		})
	}
}

func TestAttachmentBlock(t *testing.T) {
	img := encodeImage(t, coachd.MediaPNG, 3, 3)
	for _, tc := range []struct {
		typ, name string
		data      []byte
		want      string
	}{
		{coachd.MediaPNG, "cat.png", img, `{"type":"image","source":{"data":"` + base64.StdEncoding.EncodeToString(img) + `","media_type":"image/png","type":"base64"}}`},
		{coachd.MediaPDF, "a.pdf", []byte("%PDF-1.4"), `{"type":"document","source":{"data":"JVBERi0xLjQ=","media_type":"application/pdf","type":"base64"},"title":"a.pdf"}`},
		{coachd.MediaText, "n.txt", []byte("hi\n"), `{"type":"document","source":{"data":"hi\n","media_type":"text/plain","type":"text"},"title":"n.txt"}`},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			b := coachd.AttachmentBlock(tc.typ, tc.name, tc.data)
			raw, err := json.Marshal(b)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(raw); got != strings.ReplaceAll(tc.want, "\n", `\n`) {
				t.Fatalf("block = %s\nwant    %s", got, tc.want)
			}
			// What is stored must be a block the API takes on every later turn.
			if errs := coachd.CheckBlocks(coachd.RoleUser, []coachd.Block{b}); len(errs) > 0 {
				t.Fatalf("CheckBlocks: %v", errs)
			}
			typ, size, ok := coachd.AttachmentInfo(b)
			if !ok || typ != tc.typ || size != len(tc.data) {
				t.Fatalf("AttachmentInfo = %q, %d, %v; want %q, %d", typ, size, ok, tc.typ, len(tc.data))
			}
		})
	}
}

func TestSanitizeFileName(t *testing.T) {
	for in, want := range map[string]string{
		"cat.png":                "cat.png",
		"../../etc/passwd":       "passwd",
		`C:\Users\me\photo.jpg`:  "photo.jpg",
		"a\u202Egnp.exe":         "agnp.exe",
		"line\nbreak.txt":        "linebreak.txt",
		"  spaced.txt  ":         "spaced.txt",
		"dots...txt":             "dots.txt",
		"..":                     ".",
		"":                       "attachment",
		"/":                      "attachment",
		"\x00\x01":               "attachment",
		strings.Repeat("é", 150): strings.Repeat("é", coachd.FileNameMax),
		"caf\xe9.txt":            "caf.txt",
	} {
		if got := coachd.SanitizeFileName(in, "attachment"); got != want {
			t.Errorf("SanitizeFileName(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzAttachment checks the sniffer, the validator, the block builder and
// the name sanitiser on arbitrary bytes: nothing panics, an accepted
// attachment is of the type its bytes say and becomes a block the API
// accepts, and a sanitised name is always valid.
func FuzzAttachment(f *testing.F) {
	f.Add([]byte("%PDF-1.7\n"), "a.pdf")
	f.Add([]byte("hello\n"), "../x.txt")
	f.Add(webpBytes, "a\u202Eb.webp")
	f.Add([]byte("\x89PNG\x0d\x0a\x1a\x0a\x00\x00\x00\x0dIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02"), "p.png")
	f.Add([]byte("GIF89a\x01\x00\x01\x00"), "g.gif")
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		if n := coachd.SanitizeFileName(name, "attachment"); !coachd.ValidFileName(n) {
			t.Fatalf("SanitizeFileName(%q) = %q, not a valid name", name, n)
		}
		typ := coachd.SniffMediaType(data)
		if typ == "" {
			return
		}
		if err := coachd.CheckAttachment(typ, data); err != nil {
			if err.Field == "media_type" {
				t.Fatalf("sniffed %q, then refused as another type: %v", typ, err)
			}
			return
		}
		b := coachd.AttachmentBlock(typ, "x", data)
		if errs := coachd.CheckBlocks(coachd.RoleUser, []coachd.Block{b}); len(errs) > 0 {
			t.Fatalf("accepted %q attachment makes a block the API refuses: %v", typ, errs)
		}
		if _, size, ok := coachd.AttachmentInfo(b); !ok || size != len(data) {
			t.Fatalf("AttachmentInfo size = %d, want %d", size, len(data))
		}
	})
}

// TestPDFPagesAcrossReads: pages are counted 64 KB at a time; a page
// object across two reads counts once, from the file and from its block.
func TestPDFPagesAcrossReads(t *testing.T) {
	page := "/Type /Page "
	for at := 64<<10 - len(page) - 2; at <= 64<<10+2; at++ {
		pdf := []byte("%PDF-1.4 " + strings.Repeat("x", at-9) + page + "/Type /Pages " + strings.Repeat("y", 70<<10) + page)
		if got := coachd.PDFPages(pdf); got != 2 {
			t.Fatalf("page at %d: PDFPages = %d, want 2", at, got)
		}
		b := coachd.AttachmentBlock(coachd.MediaPDF, "a.pdf", pdf)
		if got := coachd.AttachmentPages(b); got != 2 {
			t.Fatalf("page at %d: AttachmentPages = %d, want 2", at, got)
		}
		omitted, _ := coachd.OmitAttachmentData([]coachd.Block{b})
		if got := coachd.AttachmentPages(omitted[0]); got != 2 {
			t.Fatalf("page at %d: AttachmentPages of the omitted block = %d, want 2", at, got)
		}
	}
	if got := coachd.PDFPages([]byte("%PDF-1.4 no page objects")); got != 1 {
		t.Fatalf("PDFPages without page objects = %d, want 1", got)
	}
}

package coachd

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	_ "image/gif" // image.DecodeConfig reads these formats
	_ "image/jpeg"
	_ "image/png"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"
)

// SniffMediaType says which attachment type data is, from its bytes
// alone, or "" when it is none of AttachmentTypes. A declared type is
// never trusted: a script saved as "cat.png" is not an image.
//
// Images and PDFs are recognised by their magic numbers (WebP and PDF
// explicitly, the rest by net/http.DetectContentType, which implements the
// WHATWG sniffing rules). Text is valid UTF-8 without NUL or other control
// characters than tab, line feed, form feed and carriage return; the
// sniffer's "text/html" or "text/xml" verdicts count as text too, since a
// text document is only ever read as text.
func SniffMediaType(data []byte) string {
	if len(data) == 0 {
		return ""
	}
	switch {
	case len(data) >= 12 && bytes.Equal(data[:4], []byte("RIFF")) && bytes.Equal(data[8:12], []byte("WEBP")):
		return MediaWebP
	case bytes.HasPrefix(data, []byte("%PDF-")):
		return MediaPDF
	}
	ct, _, _ := strings.Cut(http.DetectContentType(data), ";")
	switch ct {
	case MediaPNG, MediaJPEG, MediaGIF:
		return ct
	}
	if isPlainText(data) {
		return MediaText
	}
	return ""
}

// excelWorkbook reports whether data is an Excel workbook: an Excel
// 97-2003 file (an OLE2 compound file whose directory has a Workbook or,
// Excel 5, Book stream) or an .xlsx (a ZIP holding xl/workbook.xml).
// Windows browsers type a .csv application/vnd.ms-excel, so a real
// workbook comes as that type too, and its refusal says what to send
// instead.
func excelWorkbook(data []byte) bool {
	switch {
	case bytes.HasPrefix(data, []byte("\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1")):
		// Directory entries are 128 bytes, in sectors after the 512-byte
		// header: a UTF-16 name, its length at 0x40 (with its NUL), its
		// type at 0x42 (2, a stream). Only an entry's name counts, not
		// the same word in a document's text.
		for i := 512; i+128 <= len(data); i += 128 {
			e := data[i : i+128]
			if e[0x42] != 2 {
				continue
			}
			n := int(binary.LittleEndian.Uint16(e[0x40:]))
			if name := e[:min(n, 64)]; bytes.Equal(name, []byte("W\x00o\x00r\x00k\x00b\x00o\x00o\x00k\x00\x00\x00")) ||
				bytes.Equal(name, []byte("B\x00o\x00o\x00k\x00\x00\x00")) {
				return true
			}
		}
	case bytes.HasPrefix(data, []byte("PK\x03\x04")):
		return bytes.Contains(data, []byte("xl/workbook.xml"))
	}
	return false
}

// isPlainText reports whether data is UTF-8 text that PostgreSQL TEXT can
// hold and a reader sees whole: no NUL, no control characters besides
// \t \n \f \r, no invisible bidi overrides (which would hide text from
// the user but not from the model).
func isPlainText(data []byte) bool {
	if !utf8.Valid(data) {
		return false
	}
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	for _, r := range string(data) {
		switch {
		case r == '\t' || r == '\n' || r == '\f' || r == '\r':
		case unicode.IsControl(r):
			return false
		case r >= '\u202A' && r <= '\u202E', r >= '\u2066' && r <= '\u2069':
			return false
		}
	}
	return true
}

// checkImage refuses an image whose header cannot be read or whose sides
// exceed MaxImageSide, which the API refuses on this and every later turn.
// A WebP's size is read from its first chunk (webpSize): the standard
// library has no WebP decoder.
func checkImage(mediaType string, data []byte) string {
	var w, h int
	switch mediaType {
	case MediaPNG, MediaJPEG, MediaGIF:
		cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
		if err != nil {
			return "is not a readable " + mediaType + " image"
		}
		w, h = cfg.Width, cfg.Height
	case MediaWebP:
		var ok bool
		if w, h, ok = webpSize(data); !ok {
			return "is not a readable " + mediaType + " image"
		}
	default:
		return ""
	}
	switch {
	case w < 1 || h < 1:
		return "is an empty image"
	case w > MaxImageSide || h > MaxImageSide:
		return fmt.Sprintf("is %d×%d pixels; at most %d on a side", w, h, MaxImageSide)
	}
	return ""
}

// webpSize reads a WebP's width and height from its first chunk, which
// is VP8 (lossy), VP8L (lossless) or VP8X (extended, its canvas).
func webpSize(b []byte) (w, h int, ok bool) {
	if len(b) < 20 {
		return 0, 0, false
	}
	p := b[20:] // the first chunk's payload
	u24 := func(q []byte) int { return int(q[0]) | int(q[1])<<8 | int(q[2])<<16 }
	switch string(b[12:16]) {
	case "VP8X": // flags, reserved, then canvas width-1 and height-1, 24 bits each
		if len(p) >= 10 {
			return u24(p[4:]) + 1, u24(p[7:]) + 1, true
		}
	case "VP8L": // signature 0x2f, then width-1 and height-1, 14 bits each
		if len(p) >= 5 && p[0] == 0x2f {
			bits := binary.LittleEndian.Uint32(p[1:5])
			return int(bits&0x3fff) + 1, int(bits>>14&0x3fff) + 1, true
		}
	case "VP8 ": // a key frame's tag and start code, then 14-bit width and height
		if len(p) >= 10 && p[3] == 0x9d && p[4] == 0x01 && p[5] == 0x2a {
			return int(binary.LittleEndian.Uint16(p[6:]) & 0x3fff), int(binary.LittleEndian.Uint16(p[8:]) & 0x3fff), true
		}
	}
	return 0, 0, false
}

// SanitizeFileName makes a file name a client sent safe to store and show:
// the last path element only, without control or invisible formatting
// characters, "..", or surrounding spaces, at most FileNameMax characters.
// What is left always passes ValidFileName; an empty result is fallback.
func SanitizeFileName(name, fallback string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	var sb strings.Builder
	for _, r := range strings.ToValidUTF8(name, "") {
		if unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) {
			continue
		}
		sb.WriteRune(r)
	}
	name = sb.String()
	for strings.Contains(name, "..") {
		name = strings.ReplaceAll(name, "..", ".")
	}
	if utf8.RuneCountInString(name) > FileNameMax {
		name = string([]rune(name)[:FileNameMax])
	}
	name = strings.TrimSpace(name)
	if !ValidFileName(name) {
		return fallback
	}
	return name
}

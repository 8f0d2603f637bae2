package coachd

import (
	"bytes"
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
// WebP is checked by its magic only: the standard library has no decoder.
func checkImage(mediaType string, data []byte) string {
	switch mediaType {
	case MediaPNG, MediaJPEG, MediaGIF:
	default:
		return ""
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	switch {
	case err != nil:
		return "is not a readable " + mediaType + " image"
	case cfg.Width < 1 || cfg.Height < 1:
		return "is an empty image"
	case cfg.Width > MaxImageSide || cfg.Height > MaxImageSide:
		return fmt.Sprintf("is %d×%d pixels; at most %d on a side", cfg.Width, cfg.Height, MaxImageSide)
	}
	return ""
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

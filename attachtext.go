package coachd

import (
	"fmt"
	"strings"
)

// Text documents are read as tokens, not looked at as pictures or pages,
// and every one a history holds is re-sent on each later turn: a 3 MiB
// one is about 800,000 tokens of English and a million or more of
// Chinese, far past the model's 200,000-token context, so its turn and
// every later one would fail upstream. Their bounds are in bytes, which
// hold their tokens for the densest text too: English is about four
// bytes a token, CJK three bytes and about a token a character, so no
// plain text is much more than a token per two bytes.
//
//   - MaxTextAttachmentBytes: the text documents of one message, each and
//     all together: 100 KiB, about 50,000 tokens at most, a quarter of
//     the context.
//   - MaxHistoryTextBytes: the text documents a history re-sends (the
//     agent's window), twice that; past it the oldest become a note.
const (
	MaxTextAttachmentBytes = 100 << 10
	MaxHistoryTextBytes    = 2 * MaxTextAttachmentBytes
)

// textTooLong is the error of n bytes of text documents where at most
// MaxTextAttachmentBytes may be; field is where they are.
func textTooLong(field string, n int) *FieldError {
	return &FieldError{field, fmt.Sprintf("is %d bytes of text; text documents may be at most %d KiB a message (about 50,000 tokens of the model's 200,000-token context): split it, or send the part that matters",
		n, MaxTextAttachmentBytes>>10), "length"}
}

// TextDocumentType reports whether a client's declared media type names
// text: text/* (text/markdown, text/csv, …), JSON, XML or YAML. The upload
// route takes any file whose bytes are text as a text document (MediaText);
// a door that reads a declared type (a data: URL's) takes these as one too,
// and checks their bytes as text/plain. So it takes
// application/vnd.ms-excel, the type Windows browsers give a .csv file:
// its bytes decide, and a real workbook is refused (CheckAttachment).
func TextDocumentType(mediaType string) bool {
	t := strings.ToLower(mediaType)
	typ, sub, ok := strings.Cut(t, "/")
	switch {
	case !ok || sub == "":
		return false
	case typ == "text":
		return true
	case typ != "application":
		return false
	}
	switch sub {
	case "json", "xml", "yaml", "x-yaml", "x-ndjson", "javascript", "sql", "x-sh", "vnd.ms-excel": // as the web UI's mayUpload
		return true
	}
	for _, suffix := range []string{"+json", "+xml", "+yaml"} {
		if strings.HasSuffix(sub, suffix) {
			return true
		}
	}
	return false
}

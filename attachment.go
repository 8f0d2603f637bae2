package coachd

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"time"
	"unicode/utf8"
)

// Attachment limits. A user message carries at most MaxAttachments
// images and documents, inline or by upload reference.
//
//   - MaxAttachmentBytes (per file, decoded): 3 MiB, so that an image's
//     base64 (4 MiB) stays under the Messages API's 5 MB per image, and a
//     PDF stays well under its 32 MB per request.
//   - MaxAttachmentBytesPerMessage (decoded): 10 MiB, which sizes the chat
//     endpoints' body limit (about 13.4 MiB of base64 plus the text).
//   - MaxUploadsPerUser, MaxUploadBytesPerUser: what POST /v1/uploads may
//     keep for one user; beyond them an upload is ECONFLICT until some are
//     deleted.
const (
	MaxAttachments               = 5
	MaxAttachmentBytes           = 3 << 20
	MaxAttachmentBytesPerMessage = 10 << 20
	MaxUploadsPerUser            = 100
	MaxUploadBytesPerUser        = 50 << 20
	// MaxImageSide is the API's largest image side, in pixels.
	MaxImageSide = 8000
	// MaxPDFPages is the most PDF pages the API takes in one request:
	// a longer PDF is refused, and a history re-sends no more.
	MaxPDFPages = 100
)

// Attachment media types.
const (
	MediaPNG  = "image/png"
	MediaJPEG = "image/jpeg"
	MediaGIF  = "image/gif"
	MediaWebP = "image/webp"
	MediaPDF  = "application/pdf"
	MediaText = "text/plain"
)

// AttachmentTypes are the media types an attachment may have.
var AttachmentTypes = []string{MediaPNG, MediaJPEG, MediaGIF, MediaWebP, MediaPDF, MediaText}

// PrefixUpload prefixes upload IDs.
const PrefixUpload = "upl"

// Upload is a file the user sent with POST /v1/uploads, to attach to a
// message by its ID. Its media type is the one sniffed from its bytes.
type Upload struct {
	ID        string    `json:"id"`
	UserID    string    `json:"user_id"`
	Name      string    `json:"name"`
	MediaType string    `json:"media_type"`
	Bytes     int       `json:"bytes"`
	CreatedAt time.Time `json:"created_at"`
	Data      []byte    `json:"-"`
}

// UploadService stores the user's uploads, scoped to their user: another
// user's upload is ENOTFOUND, as a missing one.
type UploadService interface {
	// CreateUpload stores u (ID, Bytes and CreatedAt are set), within
	// MaxUploadsPerUser and MaxUploadBytesPerUser (ECONFLICT beyond).
	CreateUpload(ctx context.Context, u *Upload) error
	// FindUpload returns the user's upload with its bytes.
	FindUpload(ctx context.Context, userID, id string) (*Upload, error)
	// ListUploads returns the user's uploads, newest first, without
	// their bytes: how a client at the caps finds what to delete.
	ListUploads(ctx context.Context, userID string, page Page) ([]*Upload, string, error)
	DeleteUpload(ctx context.Context, userID, id string) error
}

// Validate checks an upload before it is stored.
func (u *Upload) Validate() []FieldError {
	var errs []FieldError
	if !ValidFileName(u.Name) {
		errs = append(errs, FieldError{"name", "must be a file name without path, control or invisible formatting characters", "format"})
	}
	if err := CheckAttachment(u.MediaType, u.Data); err != nil {
		errs = append(errs, *err)
	}
	return errs
}

// CheckAttachment reports whether data is an attachment of mediaType:
// one of AttachmentTypes, at most MaxAttachmentBytes (a text document
// MaxTextAttachmentBytes), and what its bytes
// say it is (SniffMediaType). The error's Field is "data" or
// "media_type"; callers rename it.
func CheckAttachment(mediaType string, data []byte) *FieldError {
	_, fe := checkAttachment(mediaType, data)
	return fe
}

// AcceptAttachment is CheckAttachment, then AttachmentBlock of what it
// accepted, with the facts of its source (LearnAttachment) and a PDF's
// page count it found among them.
func AcceptAttachment(mediaType, name string, data []byte) (Block, *FieldError) {
	pages, fe := checkAttachment(mediaType, data)
	if fe != nil {
		return Block{}, fe
	}
	b := AttachmentBlock(mediaType, name, data)
	learnAttachment(&b, pages)
	return b, nil
}

// checkAttachment is CheckAttachment, with a PDF's page count.
func checkAttachment(mediaType string, data []byte) (pages int, fe *FieldError) {
	switch {
	case len(data) == 0:
		return 0, &FieldError{"data", "is empty", "required"}
	case mediaType == MediaText && len(data) > MaxTextAttachmentBytes:
		return 0, textTooLong("data", len(data))
	case len(data) > MaxAttachmentBytes:
		return 0, &FieldError{"data", fmt.Sprintf("is %d bytes; at most %d (%d MiB) per attachment", len(data), MaxAttachmentBytes, MaxAttachmentBytes>>20), "length"}
	}
	got := SniffMediaType(data)
	switch {
	case got == "" && excelWorkbook(data):
		return 0, &FieldError{"data", "is an Excel workbook, which the model cannot read: save it as CSV (UTF-8) and attach that", "media_type"}
	case got == "":
		return 0, &FieldError{"data", "is not a supported file: images png, jpeg, gif, webp; documents pdf, plain UTF-8 text", "media_type"}
	case got != mediaType:
		return 0, &FieldError{"media_type", fmt.Sprintf("is %q but the content is %s", mediaType, got), "mismatch"}
	}
	if err := checkImage(mediaType, data); err != "" {
		return 0, &FieldError{"data", err, "format"}
	}
	if mediaType == MediaPDF {
		var encrypted bool
		if pages, encrypted = pdfRead(data); encrypted {
			// The API reads only standard PDFs: no passwords, no encryption.
			return 0, &FieldError{"data", "is an encrypted or password-protected PDF, which the model cannot read: save it without protection", "format"}
		}
		if pages > MaxPDFPages {
			// Stored, it would fail this turn and every later one.
			return 0, &FieldError{"data", fmt.Sprintf("has %d pages; a PDF may have at most %d (the model's limit): split it", pages, MaxPDFPages), "length"}
		}
	}
	return pages, nil
}

// AttachmentBlock is the Messages API block for an attachment already
// checked with CheckAttachment: an image with a base64 source, a PDF
// document with a base64 source, or a text document with a text source.
// Documents carry name as their title; images have no place for it.
func AttachmentBlock(mediaType, name string, data []byte) Block {
	src := map[string]string{"type": "base64", "media_type": mediaType}
	b := Block{Type: BlockDocument}
	switch mediaType {
	case MediaText:
		src["type"], src["data"] = "text", string(data)
	default:
		src["data"] = base64.StdEncoding.EncodeToString(data)
	}
	if isImage(mediaType) {
		b.Type = BlockImage
	} else if name != "" {
		title, _ := json.Marshal(name)
		b.Extra = map[string]json.RawMessage{"title": title}
	}
	b.Source, _ = json.Marshal(src)
	return b
}

// AttachmentInfo describes an image or document block: its media type and
// size in bytes (decoded), and ok false for any other block.
func AttachmentInfo(b Block) (mediaType string, size int, ok bool) {
	mediaType, size, _, ok = AttachmentSizes(b)
	return mediaType, size, ok
}

// AttachmentSizes is AttachmentInfo with the length of the block's source
// data as sent (base64 or text), in one read of the source: a caller that
// needs both reads each photo once.
func AttachmentSizes(b Block) (mediaType string, size, sent int, ok bool) {
	if b.Type != BlockImage && b.Type != BlockDocument {
		return "", 0, 0, false
	}
	if f := b.knownFacts(); f != nil {
		return f.mediaType, f.size, f.sent, f.ok
	}
	if o, ok := omittedOf(b); ok {
		return o.MediaType, o.Bytes, o.Sent, true
	}
	s, ok := readSourceHead(b.Source)
	if !ok {
		return "", 0, 0, false
	}
	size = s.Data.n
	if s.Type == "base64" {
		size = base64.StdEncoding.DecodedLen(s.Data.n) - s.Data.pad
	}
	return s.MediaType, size, s.Data.n, true
}

// AttachmentSentLen is the length of an image or document block's source
// data as sent (base64 or text), 0 for any other block.
func AttachmentSentLen(b Block) int {
	_, n, _ := AttachmentSent(b)
	return n
}

// AttachmentSent is AttachmentInfo with the length of the block's source
// data as sent (base64 or text) for its size, in one read of the source:
// the type and the sent length of each photo are asked together.
func AttachmentSent(b Block) (mediaType string, sent int, ok bool) {
	mediaType, _, sent, ok = AttachmentSizes(b)
	return mediaType, sent, ok
}

// readSourceHead reads a block's source. AttachmentBlock's, a map
// marshalled with its keys sorted, begins with its data, which is read
// without a JSON scan of its megabytes when it needs no unescaping (any
// base64): a turn asks each photo's size several times a round, and
// encoding/json's scan of a 20 MiB window was most of a photo turn's CPU.
// Any other source is decoded (the same result: FuzzSourceHead).
func readSourceHead(src []byte) (sourceHead, bool) {
	const prefix = `{"data":"`
	if rest, ok := bytes.CutPrefix(src, []byte(prefix)); ok {
		end := bytes.IndexByte(rest, '"')
		// The members after data are a few bytes, none named data in any
		// spelling encoding/json matches (any case, escaped).
		if end >= 0 && plainJSONString(rest[:end]) && bytes.IndexByte(rest[end:], '\\') < 0 &&
			!bytes.Contains(bytes.ToLower(rest[end:]), []byte("data")) {
			// The same source with its data empty decodes alike.
			var s sourceHead
			err := json.Unmarshal(append([]byte(prefix), rest[end:]...), &s)
			s.Data = dataSize{n: end, pad: bytes.Count(rest[max(0, end-2):end], []byte("="))}
			return s, err == nil
		}
	}
	var s sourceHead
	err := json.Unmarshal(src, &s)
	return s, err == nil
}

// plainJSONString reports whether b, the inside of a JSON string, is
// valid as it stands and reads as itself: ASCII, no escapes, no control
// characters.
func plainJSONString(b []byte) bool {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	for ; len(b) >= 8; b = b[8:] { // eight bytes at a time
		x := binary.LittleEndian.Uint64(b)
		bs := x ^ '\\'*ones // a zero byte where x has a backslash
		if x&high != 0 || (x-0x20*ones)&^x&high != 0 || (bs-ones)&^bs&high != 0 {
			return false
		}
	}
	for _, c := range b {
		if c < 0x20 || c == '\\' || c >= 0x80 {
			return false
		}
	}
	return true
}

// sourceHead is a block's source as AttachmentInfo needs it, read without
// a copy of its data: every round of a turn asks the size of each photo
// it re-sends, megabytes of base64 each.
type sourceHead struct {
	Type      string   `json:"type"`
	MediaType string   `json:"media_type"`
	Data      dataSize `json:"data"`
}

// dataSize is a JSON string's length once decoded and how many "=" end it
// (base64 padding).
type dataSize struct{ n, pad int }

func (d *dataSize) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*d = dataSize{}
		return nil
	}
	s := b
	if len(b) >= 2 && b[0] == '"' && bytes.IndexByte(b, '\\') < 0 && utf8.Valid(b) {
		s = b[1 : len(b)-1] // as decoded: nothing to unescape or replace
	} else {
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return err
		}
		s = []byte(str)
	}
	d.n, d.pad = len(s), bytes.Count(s[max(0, len(s)-2):], []byte("="))
	return nil
}

func isImage(mediaType string) bool {
	switch mediaType {
	case MediaPNG, MediaJPEG, MediaGIF, MediaWebP:
		return true
	}
	return false
}

// MaxHistoryAttachments is how many of a session's attachments a turn
// re-sends at most, the newest (agent's window), and
// MaxHistoryAttachmentBytes how much of their source data (base64 or
// text); a turn's read leaves out the data of older ones
// (OmitAttachmentData, Store.ReadTurn).
const (
	MaxHistoryAttachments     = 20
	MaxHistoryAttachmentBytes = 20 << 20
)

// AttachmentsMaySend reports whether a message's attachments may be in
// the window a turn re-sends when the messages after it hold count
// attachments and size bytes of their source data: whether a read must
// keep their data. The window is never larger (agent's windowCut).
func AttachmentsMaySend(count, size int) bool {
	return count < MaxHistoryAttachments && size < MaxHistoryAttachmentBytes
}

// sourceOmitted is the source type of an attachment whose data a read
// left out. Such a block is never sent: a history turns it into a note.
const sourceOmitted = "omitted"

// omittedSource is what is left of an attachment's source without its
// data: what AttachmentInfo, AttachmentOmitted and a history's note and
// estimates read.
type omittedSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Bytes     int    `json:"bytes"`           // decoded, as AttachmentInfo reports
	Sent      int    `json:"sent"`            // of source data as sent (base64 or text)
	Pages     int    `json:"pages,omitempty"` // of a PDF (PDFPages)
}

// OmitAttachmentData returns blocks with each image and document block's
// data left out (its media type, sizes and PDF page count kept), those in
// a tool_result's content too (omitResultData), and ok false when there
// is none: what a turn reads of an attachment older than the ones it may
// send. Each source is read in place, its data not copied (every stored
// message with an attachment comes through here).
func OmitAttachmentData(blocks []Block) (out []Block, ok bool) {
	for i, b := range blocks {
		if b.Type == BlockToolResult {
			if nb, omitted := omitResultData(b); omitted {
				if out == nil {
					out = append([]Block(nil), blocks...)
				}
				out[i] = nb
			}
			continue
		}
		typ, n, sent, isAtt := AttachmentSizes(b)
		if !isAtt || AttachmentOmitted(b) {
			continue
		}
		o := omittedSource{Type: sourceOmitted, MediaType: typ, Bytes: n, Sent: sent}
		if typ == MediaPDF {
			o.Pages = AttachmentPages(b)
		}
		if out == nil {
			out = append([]Block(nil), blocks...)
		}
		b.Source, _ = json.Marshal(o)
		out[i] = b
	}
	return out, out != nil
}

// AttachmentOmitted reports whether b is an attachment whose data a read
// left out (OmitAttachmentData).
func AttachmentOmitted(b Block) bool {
	_, ok := omittedOf(b)
	return ok
}

// OmittedSizes returns an omitted attachment's source data length as
// sent and its PDF page count.
func OmittedSizes(b Block) (sent, pages int) {
	o, _ := omittedOf(b)
	return o.Sent, o.Pages
}

func omittedOf(b Block) (omittedSource, bool) {
	var o omittedSource
	// Only OmitAttachmentData writes one, "type" first: a prefix tells
	// without a look at the megabytes of an attachment's data.
	if (b.Type != BlockImage && b.Type != BlockDocument) || !bytes.HasPrefix(b.Source, []byte(`{"type":"`+sourceOmitted+`"`)) ||
		json.Unmarshal(b.Source, &o) != nil || o.Type != sourceOmitted {
		return omittedSource{}, false
	}
	return o, true
}

// pdfPageRe finds a PDF's page objects (not its /Pages tree nodes).
var pdfPageRe = regexp.MustCompile(`/Type\s*/Page[^s]`)

// PDFPages counts a PDF's pages: its page tree's count (pdfTreePages),
// or, when the file cannot be read so, its page objects, at least one
// for a file with anything in it.
func PDFPages(raw []byte) int {
	n, _ := pdfRead(raw)
	return n
}

// pdfRead is PDFPages, and whether the PDF is encrypted (pdfTreePages).
func pdfRead(raw []byte) (pages int, encrypted bool) {
	n, encrypted, err := pdfTreePages(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		n = countPages(bytes.NewReader(raw))
	}
	return n, encrypted
}

// AttachmentPages is the page count of a PDF block: the one found when
// it was accepted or cached (LearnAttachment), or PDFPages read through
// its base64 without a copy of the file.
func AttachmentPages(b Block) int {
	if f := b.knownFacts(); f != nil && f.pages > 0 {
		return f.pages
	}
	if o, ok := omittedOf(b); ok {
		return o.Pages
	}
	// AttachmentBlock's source starts with its data (keys sorted): read
	// it in place. Any other form, or data with escapes, is decoded.
	var data []byte
	const head = `{"data":"`
	if rest, ok := bytes.CutPrefix(b.Source, []byte(head)); ok {
		if end := bytes.IndexByte(rest, '"'); end >= 0 && bytes.IndexByte(rest[:end], '\\') < 0 {
			data = rest[:end]
		}
	}
	if data == nil {
		var s blockSource
		if json.Unmarshal(b.Source, &s) != nil {
			return 0
		}
		data = []byte(s.Data)
	}
	r, ok := newBase64At(data)
	if !ok {
		// Line breaks or bad base64: PDFPages of what a decode gives.
		raw, _ := base64.StdEncoding.DecodeString(string(data))
		return PDFPages(raw)
	}
	if n, _, err := pdfTreePages(r, r.size); err == nil {
		return n
	}
	return countPages(base64.NewDecoder(base64.StdEncoding, bytes.NewReader(data)))
}

// countPages counts pdfPageRe's matches in what r reads, 64 KB at a time;
// a match (far shorter than pageOverlap) across two reads is found in the
// second, with the end of the first kept before it.
func countPages(r io.Reader) int {
	const chunk, pageOverlap = 64 << 10, 256
	buf := make([]byte, pageOverlap+chunk)
	kept, pages, blank := 0, 0, true
	for {
		n, err := io.ReadFull(r, buf[kept:])
		if n > 0 {
			read := buf[kept : kept+n]
			blank = blank && len(bytes.TrimSpace(read)) == 0
			for _, m := range pdfPageRe.FindAllIndex(buf[:kept+n], -1) {
				if m[1] > kept { // not found in the last read already
					pages++
				}
			}
			next := min(pageOverlap, kept+n)
			copy(buf, buf[kept+n-next:kept+n])
			kept = next
		}
		if err != nil {
			break
		}
	}
	if pages == 0 && !blank {
		pages = 1
	}
	return pages
}

package server

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sse"
)

// Body limits of the routes that carry files; every other route keeps
// Deps.MaxBodyBytes (1 MiB by default), and a larger MaxBodyBytes wins.
//
//   - ChatMaxBodyBytes: a chat request may carry
//     coachd.MaxAttachmentBytesPerMessage (10 MiB) of inline attachments,
//     about 13.4 MiB as base64, plus a 32,000-character message.
//   - ForeignMaxBodyBytes: POST /v1/chat/completions and
//     POST /v1/chat/stream?protocol=ai-sdk, whose clients resend earlier
//     messages' files (decodeByMessage keeps only the last's).
//   - UploadMaxBodyBytes: one file of coachd.MaxAttachmentBytes plus the
//     multipart framing.
const (
	ChatMaxBodyBytes   = 16 << 20
	UploadMaxBodyBytes = coachd.MaxAttachmentBytes + 64<<10
)

// fileBodyTimeoutFactor stretches the body timeout of the routes that
// carry files: 2 minutes by default, which a 16 MiB body meets at about
// 140 KB/s.
const fileBodyTimeoutFactor = 4

// bodyLimits are the size and time limits of r's body.
func (s *Server) bodyLimits(r *http.Request) (int64, time.Duration) {
	if r.Method == http.MethodPost {
		switch r.URL.Path {
		case "/v1/chat/stream":
			// useChat resends earlier files (decodeUIChatRequest); the
			// query is parsed only when there is one (a turn's hot path).
			if r.URL.RawQuery != "" && streamDialect(r) == sse.AISDK {
				return max(s.maxBody, ForeignMaxBodyBytes), s.bodyTime * fileBodyTimeoutFactor
			}
			return max(s.maxBody, ChatMaxBodyBytes), s.bodyTime * fileBodyTimeoutFactor
		case "/v1/chat", "/v1/chat/record", "/v1/chat/abort": // record's image and document blocks are attachments' size
			return max(s.maxBody, ChatMaxBodyBytes), s.bodyTime * fileBodyTimeoutFactor
		case "/v1/chat/completions": // earlier messages' files resent (decodeOAIRequest)
			return max(s.maxBody, OAIMaxBodyBytes), s.bodyTime * fileBodyTimeoutFactor
		case "/v1/uploads":
			return max(s.maxBody, UploadMaxBodyBytes), s.bodyTime * fileBodyTimeoutFactor
		}
	}
	return s.maxBody, s.bodyTime
}

// attachmentRequest is one attachment of a chat request: inline (type,
// media_type, data in base64, name) or a reference to the user's upload.
type attachmentRequest struct {
	Type      string `json:"type,omitempty"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	Name      string `json:"name,omitempty"`
	UploadID  string `json:"upload_id,omitempty"`
}

// maxInlineBase64 is the longest base64 an inline attachment may have.
const maxInlineBase64 = (coachd.MaxAttachmentBytes + 2) / 3 * 4

// validAttachments checks the shape of a request's attachments: what can
// be told without decoding or reading the store.
func validAttachments(list []attachmentRequest) []coachd.FieldError {
	var errs []coachd.FieldError
	if len(list) > coachd.MaxAttachments {
		return []coachd.FieldError{{Field: "attachments", Message: fmt.Sprintf("must be at most %d per message", coachd.MaxAttachments), Code: "length"}}
	}
	total := 0
	for i, a := range list {
		fail := func(field, msg, code string) {
			errs = append(errs, coachd.FieldError{Field: fmt.Sprintf("attachments[%d].%s", i, field), Message: msg, Code: code})
		}
		if a.UploadID != "" {
			if a.Type != "" || a.MediaType != "" || a.Data != "" || a.Name != "" {
				fail("upload_id", "goes alone: the upload has its type, bytes and name", "exclusive")
			} else if !coachd.ValidID(coachd.PrefixUpload, a.UploadID) {
				fail("upload_id", "is not an upload id", "format")
			}
			continue
		}
		switch {
		case a.Type != "image" && a.Type != "document":
			fail("type", "must be image or document (or give upload_id)", "enum")
		case !validKind(a.Type, a.MediaType):
			fail("media_type", "must be image/png, image/jpeg, image/gif or image/webp for an image; application/pdf or text (text/plain, text/markdown, text/csv, application/json, …) for a document", "enum")
		case a.Data == "":
			fail("data", "is required: the file in base64", "required")
		case len(a.Data) > maxInlineBase64:
			fail("data", fmt.Sprintf("must be at most %d bytes (%d MiB) decoded", coachd.MaxAttachmentBytes, coachd.MaxAttachmentBytes>>20), "length")
		}
		total += base64.StdEncoding.DecodedLen(len(a.Data))
	}
	if total > coachd.MaxAttachmentBytesPerMessage+2*len(list) {
		errs = append(errs, coachd.FieldError{Field: "attachments", Message: fmt.Sprintf("must be at most %d MiB in all", coachd.MaxAttachmentBytesPerMessage>>20), Code: "length"})
	}
	return errs
}

// dataURL reads a base64 data: URL, what browsers make of a file: its
// media type (parameters left out; "" when it names none) and its base64.
// msg says why url is not one; a remote URL is refused: coachd fetches
// no URL a client names.
func dataURL(url string) (mediaType, data, msg string) {
	meta, data, ok := strings.Cut(strings.TrimPrefix(url, "data:"), ",")
	if !strings.HasPrefix(url, "data:") || !ok {
		return "", "", "must be a data: URL (coachd does not fetch files)"
	}
	meta, b64 := strings.CutSuffix(meta, ";base64")
	if !b64 {
		return "", "", "must be a base64 data: URL"
	}
	mediaType, _, _ = strings.Cut(meta, ";") // parameters (charset) left out
	return mediaType, data, ""
}

// validKind reports whether mediaType is an attachment type of kind
// (image or document): a document may be declared as any text type
// (coachd.TextDocumentType), read as text/plain.
func validKind(kind, mediaType string) bool {
	if coachd.TextDocumentType(mediaType) {
		return kind == "document"
	}
	switch mediaType {
	case coachd.MediaPNG, coachd.MediaJPEG, coachd.MediaGIF, coachd.MediaWebP:
		return kind == "image"
	case coachd.MediaPDF, coachd.MediaText:
		return kind == "document"
	}
	return false
}

// attachmentBlocks turns a request's attachments into the blocks of the
// user message: inline ones decoded and checked against what their bytes
// are, references read from the user's own uploads (another user's is
// not found, as a missing one). Every problem is an EINVALID field error,
// found before anything is stored.
func (s *Server) attachmentBlocks(ctx context.Context, userID string, list []attachmentRequest) ([]coachd.Block, error) {
	var (
		blocks []coachd.Block
		errs   []coachd.FieldError
		total  int
		text   int // bytes of text documents (coachd.MaxTextAttachmentBytes)
	)
	for i, a := range list {
		at := fmt.Sprintf("attachments[%d].", i)
		var data []byte
		mediaType, name := a.MediaType, a.Name
		if a.UploadID != "" {
			u, err := s.store.FindUpload(ctx, userID, a.UploadID)
			switch coachd.ErrorCode(err) {
			case "":
				data, mediaType, name = u.Data, u.MediaType, u.Name
			case coachd.ENOTFOUND:
				errs = append(errs, coachd.FieldError{Field: at + "upload_id", Message: "no such upload", Code: "not_found"})
				continue
			default:
				return nil, err
			}
		} else {
			var err error
			if data, err = base64.StdEncoding.DecodeString(a.Data); err != nil {
				errs = append(errs, coachd.FieldError{Field: at + "data", Message: "must be standard base64 (RFC 4648, padded)", Code: "format"})
				continue
			}
			name = coachd.SanitizeFileName(name, "")
		}
		declared := mediaType
		if coachd.TextDocumentType(mediaType) {
			mediaType = coachd.MediaText // notes.md, data.csv: as the upload route takes them
		}
		b, fe := coachd.AcceptAttachment(mediaType, name, data)
		if fe != nil {
			if fe.Code == "mismatch" && declared != mediaType {
				fe.Message = strings.Replace(fe.Message, strconv.Quote(mediaType), strconv.Quote(declared), 1)
			}
			fe.Field = at + fe.Field
			errs = append(errs, *fe)
			continue
		}
		total += len(data)
		if mediaType == coachd.MediaText {
			text += len(data)
		}
		blocks = append(blocks, b)
	}
	if total > coachd.MaxAttachmentBytesPerMessage {
		errs = append(errs, coachd.FieldError{Field: "attachments", Message: fmt.Sprintf("must be at most %d MiB in all", coachd.MaxAttachmentBytesPerMessage>>20), Code: "length"})
	}
	if text > coachd.MaxTextAttachmentBytes {
		errs = append(errs, coachd.FieldError{Field: "attachments", Message: fmt.Sprintf("hold %d bytes of text documents; at most %d KiB in all (about 50,000 tokens of the model's 200,000-token context)", text, coachd.MaxTextAttachmentBytes>>10), Code: "length"})
	}
	if len(errs) > 0 {
		return nil, coachd.Invalid(errs...)
	}
	return blocks, nil
}

package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/coachd/coachd"
)

// oaiPart is one part of a message's content: text, an image (what Open
// WebUI and LibreChat send for a pasted photo) or a file (a PDF, as the
// AI SDK's openai-compatible provider sends one).
type oaiPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL *struct {
		URL string `json:"url"`
	} `json:"image_url"`
	File *struct {
		FileData string `json:"file_data"`
		FileID   string `json:"file_id"`
		Filename string `json:"filename"`
	} `json:"file"`
}

// oaiContent is a message's content, read once as the request is decoded
// (a conversation whose photos are resent is megabytes of JSON): a string
// is one text part, the text is its text parts'. partsOK is false when it
// is missing or neither a string (or null) nor parts; textOK also when it
// has parts other than text, images and files.
type oaiContent struct {
	parts           []oaiPart
	text            string
	partsOK, textOK bool
	set             bool // the message has content, of whatever JSON type
}

// UnmarshalJSON never fails: a content of the wrong JSON type is the
// request's to refuse, naming its message (oaiTurn).
func (c *oaiContent) UnmarshalJSON(b []byte) error {
	*c = oaiContent{set: true}
	var s string
	switch {
	case len(b) > 0 && b[0] != '[' && json.Unmarshal(b, &s) == nil: // an array is never a string
		c.parts, c.partsOK = []oaiPart{{Type: "text", Text: s}}, true
	case json.Unmarshal(b, &c.parts) == nil:
		c.partsOK = true
	default:
		c.parts = nil
		return nil
	}
	var sb strings.Builder
	for _, p := range c.parts {
		switch p.Type {
		case "text":
			sb.WriteString(p.Text)
		case "image_url", "file":
		default:
			return nil
		}
	}
	c.text, c.textOK = sb.String(), true
	return nil
}

// parts reads a message's content: a string is one text part.
func (m oaiMessage) parts() ([]oaiPart, bool) { return m.Content.parts, m.Content.partsOK }

// text reads a message's text: a string, or its text parts; ok is false
// when it has parts other than text, images and files.
func (m oaiMessage) text() (string, bool) { return m.Content.text, m.Content.textOK }

// oaiAttachments reads the image_url and file parts of messages[i] as
// the user message's attachments: data: URLs (base64) of the types and
// within the limits attachments have, checked as theirs. A remote URL is
// refused: coachd fetches no URL a client names.
func (s *Server) oaiAttachments(ctx context.Context, userID string, i int, parts []oaiPart) ([]coachd.Block, error) {
	var (
		list []attachmentRequest
		at   []string // the field of each attachment's data
	)
	for j, p := range parts {
		var url, name, field string
		kind := "image"
		switch p.Type {
		case "image_url":
			field = fmt.Sprintf("messages[%d].content[%d].image_url.url", i, j)
			if p.ImageURL != nil {
				url = p.ImageURL.URL
			}
		case "file":
			field = fmt.Sprintf("messages[%d].content[%d].file.file_data", i, j)
			if p.File != nil {
				url, name = p.File.FileData, p.File.Filename
			}
		default:
			continue
		}
		if url == "" {
			return nil, coachd.Invalid(coachd.FieldError{Field: field, Message: "is required: the file as a data: URL (coachd keeps no files by id)", Code: "required"})
		}
		mediaType, data, msg := dataURL(url)
		if msg != "" {
			if !strings.HasPrefix(url, "data:") {
				msg = "must be a data: URL (data:image/png;base64,...): coachd does not fetch files"
			}
			return nil, coachd.Invalid(coachd.FieldError{Field: field, Message: msg, Code: "format"})
		}
		if untyped(mediaType) {
			// A browser gives many files no type: what the bytes are.
			var fe *coachd.FieldError
			if mediaType, fe = sniffUntyped(data); fe != nil {
				fe.Field = field
				return nil, coachd.Invalid(*fe)
			}
		}
		if p.Type == "file" && !strings.HasPrefix(mediaType, "image/") {
			kind = "document" // an image_url part holds an image only
		}
		list = append(list, attachmentRequest{Type: kind, MediaType: mediaType, Data: data, Name: name})
		at = append(at, field)
	}
	if len(list) == 0 {
		return nil, nil
	}
	// The attachments' own checks, their fields renamed to the parts.
	rename := func(errs []coachd.FieldError) error {
		for k, fe := range errs {
			if rest, ok := strings.CutPrefix(fe.Field, "attachments["); ok {
				n, _, _ := strings.Cut(rest, "]")
				if x, err := strconv.Atoi(n); err == nil && x < len(at) {
					errs[k].Field = at[x] // its data and its media type
				}
			} else if fe.Field == "attachments" {
				errs[k].Field = fmt.Sprintf("messages[%d].content", i)
			}
		}
		return coachd.Invalid(errs...)
	}
	if errs := validAttachments(list); len(errs) > 0 {
		return nil, rename(errs)
	}
	blocks, err := s.attachmentBlocks(ctx, userID, list)
	if e := coachd.AsError(err); err != nil && e.Code == coachd.EINVALID {
		return nil, rename(e.Details)
	}
	return blocks, err
}

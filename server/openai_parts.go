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

// parts reads a message's content: a string is one text part.
func (m oaiMessage) parts() ([]oaiPart, bool) {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return []oaiPart{{Type: "text", Text: s}}, true
	}
	var parts []oaiPart
	if json.Unmarshal(m.Content, &parts) != nil {
		return nil, false
	}
	return parts, true
}

// text reads a message's text: a string, or its text parts; ok is false
// when it has parts other than text, images and files.
func (m oaiMessage) text() (string, bool) {
	parts, ok := m.parts()
	if !ok {
		return "", false
	}
	var sb strings.Builder
	for _, p := range parts {
		switch p.Type {
		case "text":
			sb.WriteString(p.Text)
		case "image_url", "file":
		default:
			return "", false
		}
	}
	return sb.String(), true
}

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

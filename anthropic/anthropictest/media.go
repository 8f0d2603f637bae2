package anthropictest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/coachd/coachd"
)

// The Messages API's limits on media: 5 MB of base64 per image, 100
// images and 100 PDF pages per request, 32 MB per request.
const (
	maxImageBase64 = 5 << 20
	maxImages      = 100
	maxPDFPages    = 100
	maxRequest     = 32 << 20
)

var imageTypes = []string{"image/jpeg", "image/png", "image/gif", "image/webp"}

// tooLarge is the API's answer to a body over maxRequest.
func tooLarge() *apiError {
	return &apiError{http.StatusRequestEntityTooLarge, "request_too_large", "Request exceeds the maximum allowed number of bytes."}
}

// mediaSource is an image or document source as the API reads it.
type mediaSource struct {
	Type      string  `json:"type"`
	MediaType string  `json:"media_type"`
	Data      *string `json:"data"`
	URL       string  `json:"url"`
	FileID    string  `json:"file_id"`
}

// checkMedia checks an image or document block at "messages.i.content.j"
// the way the API does: the source's type and media type, data that is
// valid base64 of what the media type says, the per-image limit. pages
// is a base64 PDF's page count.
func checkMedia(at string, role string, b coachd.Block) (pages int, _ *apiError) {
	if role != "user" {
		return 0, invalid("%s: %s blocks can only be in user messages", at, b.Type)
	}
	var s mediaSource
	if len(b.Source) == 0 || json.Unmarshal(b.Source, &s) != nil {
		return 0, invalid("%s.%s.source: Field required", at, b.Type)
	}
	base := at
	at = fmt.Sprintf("%s.%s.source.%s", at, b.Type, s.Type)
	switch {
	case s.Type == "url" && s.URL != "", s.Type == "file" && s.FileID != "":
		return 0, nil
	case s.Type == "text" && b.Type == coachd.BlockDocument:
		if s.MediaType != "text/plain" {
			return 0, invalid("%s.media_type: Input should be 'text/plain'", at)
		}
		if s.Data == nil {
			return 0, invalid("%s.data: Field required", at)
		}
		return 0, nil
	case s.Type != "base64":
		if b.Type == coachd.BlockImage {
			return 0, invalid("%s.%s.source: Input tag '%s' found using 'type' does not match any of the expected tags: 'base64', 'url', 'file'", base, b.Type, s.Type)
		}
		return 0, invalid("%s.%s.source: Input tag '%s' found using 'type' does not match any of the expected tags: 'base64', 'text', 'content', 'url', 'file'", base, b.Type, s.Type)
	}
	if b.Type == coachd.BlockImage && !slices.Contains(imageTypes, s.MediaType) {
		return 0, invalid("%s.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'", at)
	}
	if b.Type == coachd.BlockDocument && s.MediaType != "application/pdf" {
		return 0, invalid("%s.media_type: Input should be 'application/pdf'", at)
	}
	if s.Data == nil {
		return 0, invalid("%s.data: Field required", at)
	}
	if b.Type == coachd.BlockImage && len(*s.Data) > maxImageBase64 {
		return 0, invalid("%s: image exceeds 5 MB maximum: %d bytes > %d bytes", at, len(*s.Data), maxImageBase64)
	}
	raw, err := base64.StdEncoding.DecodeString(*s.Data)
	if err != nil || len(raw) == 0 {
		return 0, invalid("%s.data: The %s data is not valid base64.", at, b.Type)
	}
	if b.Type == coachd.BlockDocument {
		if !bytes.HasPrefix(raw, []byte("%PDF-")) {
			return 0, invalid("%s: The PDF specified was not valid.", at)
		}
		return coachd.PDFPages(raw), nil
	}
	if got := coachd.SniffMediaType(raw); got != s.MediaType {
		return 0, invalid("%s: Image does not match the provided media type %s", at, s.MediaType)
	}
	return 0, nil
}

package server

import (
	"net/http"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/coachd/coachd"
)

// errOAIBody is the answer to a body that is not a chat completion request.
var errOAIBody = coachd.Invalid(coachd.FieldError{Message: "the body must be a JSON chat completion request", Code: "json"})

// decodeOAIRequest reads a chat completion request as it arrives, one
// message at a time (decodeByMessage), holding the image and file data of
// the last message only: each message's is dropped once another follows
// it (nothing but the last message's parts is read; earlier ones count by
// their text).
func decodeOAIRequest(r *http.Request, req *oaiRequest) error {
	return decodeByMessage(r, req, errOAIBody,
		func() { req.Messages = req.Messages[:0] },
		func(at jsontext.Pointer, msg []byte) error {
			var m oaiMessage
			if err := foreignUnmarshal(at, msg, &m, errOAIBody); err != nil {
				return err
			}
			if n := len(req.Messages); n > 0 {
				req.Messages[n-1].Content.dropData()
			}
			req.Messages = append(req.Messages, m)
			return nil
		})
}

// dropData forgets the content's image and file data, keeping its parts'
// kinds and its text.
func (c *oaiContent) dropData() {
	for i := range c.parts {
		if p := &c.parts[i]; p.ImageURL != nil {
			p.ImageURL = &struct {
				URL string `json:"url"`
			}{}
		} else if p.File != nil {
			p.File = &struct {
				FileData string `json:"file_data"`
				FileID   string `json:"file_id"`
				Filename string `json:"filename"`
			}{Filename: p.File.Filename}
		}
	}
}

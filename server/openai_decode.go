package server

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/coachd/coachd"
)

// OAIMaxBodyBytes bounds a POST /v1/chat/completions body. Its clients
// resend every earlier message, photos and files too, though coachd has
// them stored and uses only the last message's: decodeOAIRequest reads
// past their data without keeping it, so a long photo chat goes on where
// ChatMaxBodyBytes would have refused it after a handful of photos. One
// message is still at most ChatMaxBodyBytes.
const OAIMaxBodyBytes = 64 << 20

// errOAIBody is the answer to a body that is not a chat completion request.
var errOAIBody = coachd.Invalid(coachd.FieldError{Message: "the body must be a JSON chat completion request", Code: "json"})

// decodeOAIRequest reads a chat completion request as it arrives, one
// message at a time, holding the image and file data of the last message
// only: each message's is dropped once another follows it (nothing but
// the last message's parts is read; earlier ones count by their text).
// Otherwise it decodes as decodeForeign does: encoding/json's rules for
// the fields, NUL refused in any string.
func decodeOAIRequest(r *http.Request, req *oaiRequest) error {
	dec := jsontext.NewDecoder(r.Body, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return oaiBodyError(err)
	}
	rest := []byte{'{'} // the members but messages, decoded together at the end
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return oaiBodyError(err)
		}
		name := tok.String()
		if strings.EqualFold(name, "messages") && dec.PeekKind() == '[' {
			msgs, err := decodeOAIMessages(dec, name, req.Messages[:0])
			if err != nil {
				return err
			}
			req.Messages = msgs
			continue
		}
		v, err := dec.ReadValue()
		if err != nil {
			return oaiBodyError(err)
		}
		if err := noNULAt(jsontext.Pointer("").AppendToken(name), v); err != nil {
			return err
		}
		if len(rest) > 1 {
			rest = append(rest, ',')
		}
		rest, _ = jsontext.AppendQuote(rest, name)
		rest = append(append(rest, ':'), v...)
	}
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '}' {
		return oaiBodyError(err)
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return oaiBodyError(err) // trailing data, as json.Unmarshal refuses it
	}
	if err := json.Unmarshal(append(rest, '}'), req); err != nil { // leaves Messages alone
		return errOAIBody
	}
	return nil
}

// decodeOAIMessages reads the messages array dec is at, a member named
// name, appending to msgs.
func decodeOAIMessages(dec *jsontext.Decoder, name string, msgs []oaiMessage) ([]oaiMessage, error) {
	if _, err := dec.ReadToken(); err != nil {
		return nil, oaiBodyError(err)
	}
	for dec.PeekKind() != ']' {
		v, err := dec.ReadValue()
		if err != nil {
			return nil, oaiBodyError(err)
		}
		at := jsontext.Pointer("").AppendToken(name).AppendToken(strconv.Itoa(len(msgs)))
		if len(v) > ChatMaxBodyBytes {
			return nil, coachd.Errorf(coachd.ETOOLARGE, "%s is larger than %d bytes", fieldPath(at), ChatMaxBodyBytes)
		}
		if err := noNULAt(at, v); err != nil {
			return nil, err
		}
		var m oaiMessage
		if err := json.Unmarshal(v, &m); err != nil {
			return nil, errOAIBody
		}
		if n := len(msgs); n > 0 {
			msgs[n-1].Content.dropData()
		}
		msgs = append(msgs, m)
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, oaiBodyError(err)
	}
	return msgs, nil
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

// oaiBodyError is the answer to a failed read of the body: a body that
// did not arrive in time or is too large says so, anything else is not a
// chat completion request.
func oaiBodyError(err error) error {
	if e := bodyLimitError(err); e != nil {
		return e
	}
	return errOAIBody
}

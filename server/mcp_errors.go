package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/coachd/coachd"
)

// What POST /v1/mcp refuses before a JSON-RPC message is read is the
// API's error, in its one shape: the MCP SDK's transport answers such a
// request in plain text, whose text may name Go types.

// mcpBody checks, as decode does for every other route, the Content-Type
// (415) and the body: within its bound (413), not empty, well-formed JSON
// (400 naming where it broke). The body is put back for the SDK.
func mcpBody(r *http.Request) error {
	if err := requireJSON(r); err != nil {
		return err
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return coachd.Invalid(coachd.FieldError{Message: "request body is empty; send a JSON-RPC message", Code: "required"})
	}
	if !json.Valid(body) {
		if err := scanStrict(body); err != nil {
			return err
		}
		return jsonError("", "is not valid JSON")
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return nil
}

// mcpErrorWriter holds back a plain-text error the SDK writes, for
// mcpTransportError to answer instead; anything else passes through.
type mcpErrorWriter struct {
	http.ResponseWriter
	status int // the held error's; 0 when none is held
	text   []byte
}

// maxMCPErrorText bounds the held text (the SDK's are one short line).
const maxMCPErrorText = 1 << 10

func (w *mcpErrorWriter) WriteHeader(status int) {
	if status >= 400 && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.status = status
		return
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *mcpErrorWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		return w.ResponseWriter.Write(b)
	}
	if room := maxMCPErrorText - len(w.text); room > 0 {
		w.text = append(w.text, b[:min(len(b), room)]...)
	}
	return len(b), nil
}

func (w *mcpErrorWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok && w.status == 0 {
		f.Flush()
	}
}

func (w *mcpErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// mcpStatusCodes are the codes of the statuses the SDK answers with.
var mcpStatusCodes = map[int]string{
	http.StatusBadRequest:            coachd.EINVALID,
	http.StatusForbidden:             coachd.EFORBIDDEN,
	http.StatusNotFound:              coachd.ENOTFOUND,
	http.StatusMethodNotAllowed:      coachd.EINVALID,
	http.StatusConflict:              coachd.ECONFLICT,
	http.StatusRequestEntityTooLarge: coachd.ETOOLARGE,
	http.StatusUnsupportedMediaType:  coachd.EUNSUPPORTED,
}

// mcpTransportError is the SDK's plain-text refusal as the API's error:
// a body that is JSON but no JSON-RPC message (an empty batch, a string)
// says so with a detail, the SDK's words going to the log only; any other
// keeps its short, clean text; a 5xx is internal.
func mcpTransportError(status int, text []byte) error {
	msg := coachd.UpstreamText(strings.TrimSpace(string(text)), coachd.MaxUpstreamText)
	code, ok := mcpStatusCodes[status]
	switch {
	case !ok:
		return &coachd.Error{Code: coachd.EINTERNAL, Message: "MCP transport failed", Err: errors.New(msg)}
	case status == http.StatusBadRequest && strings.HasPrefix(msg, "malformed payload"):
		e := coachd.Invalid(coachd.FieldError{Message: "request body must be a JSON-RPC 2.0 message, or a batch of them", Code: "json"})
		e.Err = errors.New(msg)
		return e
	}
	return &coachd.Error{Code: code, Message: msg}
}

package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/coachd/coachd"
)

// Validator is a decoded request body that can check itself.
type Validator interface {
	Valid(ctx context.Context) []coachd.FieldError
}

// decode reads a JSON request body strictly: Content-Type must be
// application/json (415), the body is bounded by withBodyLimit (413), and
// it is read by unmarshalStrict (400: malformed, trailing data, unknown
// fields, invalid UTF-8, duplicate keys, NUL characters); then the value
// must pass its own Valid check (400 with details).
func decode[T Validator](r *http.Request) (T, error) {
	var v T
	if err := requireJSON(r); err != nil {
		return v, err
	}
	body, err := readBody(r)
	if err != nil {
		return v, err
	}
	if err := unmarshalStrict(body, &v); err != nil {
		return v, err
	}
	if errs := v.Valid(r.Context()); len(errs) > 0 {
		return v, coachd.Invalid(errs...)
	}
	return v, nil
}

// readBody reads the request body within its bounds: a body over its size
// limit is 413, one too slow to arrive is answered as bodyTimeoutError says.
func readBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(r.Body)
	if err == nil {
		return body, nil
	}
	if e := bodyLimitError(err); e != nil {
		return nil, e
	}
	return nil, &coachd.Error{Code: coachd.EINVALID, Message: "request body could not be read", Err: err}
}

// bodyLimitError is the answer to a read of the body that failed on one
// of its bounds: 413 past its size, bodyTimeoutError's past its time; nil
// for any other error.
func bodyLimitError(err error) error {
	if e := bodyTimeoutError(err); e != nil {
		return e
	}
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return &coachd.Error{Code: coachd.ETOOLARGE, Message: fmt.Sprintf("request body is larger than %d bytes", tooBig.Limit), Err: err}
	}
	return nil
}

// decodeForeign reads the JSON body of a client whose format coachd does
// not define (OpenAI's, the AI SDK's): fields coachd does not read are
// ignored, since those clients send many; the bounds hold as for decode,
// and so does the refusal of NUL (noNUL). shape names the expected body in
// the error.
func decodeForeign(r *http.Request, v any, shape string) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return coachd.Invalid(coachd.FieldError{Message: "the body must be " + shape, Code: "json"})
	}
	return noNUL(body)
}

// decodeOptional is decode for bodies that may be left out entirely: an
// empty body decodes as the zero value (then validated).
func decodeOptional[T Validator](r *http.Request) (T, error) {
	if r.ContentLength == 0 && r.Header.Get("Content-Type") == "" {
		var v T
		if errs := v.Valid(r.Context()); len(errs) > 0 {
			return v, coachd.Invalid(errs...)
		}
		return v, nil
	}
	return decode[T](r)
}

func requireJSON(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return coachd.Errorf(coachd.EUNSUPPORTED, "Content-Type must be application/json, got %q", ct)
	}
	return nil
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "int", "int64", "int32":
		return "an integer"
	case "float64":
		return "a number"
	case "slice":
		return "an array"
	}
	return "an object"
}

// encode writes v as JSON with the given status.
func (s *Server) encode(w http.ResponseWriter, r *http.Request, status int, v any) {
	if s.writeTime > 0 {
		// A large list to a client that does not read must not hold the
		// connection and this goroutine forever.
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.writeTime))
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		// Headers are gone; all that is left is to say so in the log.
		s.log(r).Warn("encode response", "err", err)
	}
}

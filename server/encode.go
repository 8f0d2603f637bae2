package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/coachd/coachd"
)

// Validator is a decoded request body that can check itself.
type Validator interface {
	Valid(ctx context.Context) []coachd.FieldError
}

// decode reads a JSON request body strictly: Content-Type must be
// application/json (415), the body is bounded by withBodyLimit (413),
// unknown fields and trailing data are rejected (400), and the value must
// pass its own Valid check (400 with details).
func decode[T Validator](r *http.Request) (T, error) {
	var v T
	if err := requireJSON(r); err != nil {
		return v, err
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return v, decodeError(err)
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return v, decodeError(err)
		}
		return v, coachd.Errorf(coachd.EINVALID, "request body must hold exactly one JSON value; found trailing data")
	}
	if errs := v.Valid(r.Context()); len(errs) > 0 {
		return v, coachd.Invalid(errs...)
	}
	return v, nil
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

// decodeError turns a json decoding error into a caller-safe coded error.
func decodeError(err error) error {
	if e := bodyTimeoutError(err); e != nil {
		return e
	}
	var (
		syntax  *json.SyntaxError
		typ     *json.UnmarshalTypeError
		tooBig  *http.MaxBytesError
		field   string
		unknown bool
	)
	if msg, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		field, unknown = strings.Trim(msg, `"`), true
	}
	switch {
	case errors.As(err, &tooBig):
		return &coachd.Error{Code: coachd.ETOOLARGE, Message: fmt.Sprintf("request body is larger than %d bytes", tooBig.Limit), Err: err}
	case errors.Is(err, io.EOF):
		return coachd.Errorf(coachd.EINVALID, "request body is empty; send a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return coachd.Errorf(coachd.EINVALID, "request body is truncated JSON")
	case errors.As(err, &syntax):
		return coachd.Errorf(coachd.EINVALID, "malformed JSON at byte %d", syntax.Offset)
	case errors.As(err, &typ):
		name := typ.Field
		if name == "" {
			return coachd.Errorf(coachd.EINVALID, "request body must be a JSON object, not %s", typ.Value)
		}
		return coachd.Invalid(coachd.FieldError{Field: name, Message: "must be " + jsonKind(typ.Type.Kind().String()) + ", not " + typ.Value, Code: "type"})
	case unknown:
		return coachd.Invalid(coachd.FieldError{Field: field, Message: "unknown field", Code: "unknown"})
	}
	return &coachd.Error{Code: coachd.EINVALID, Message: "request body could not be read as JSON", Err: err}
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

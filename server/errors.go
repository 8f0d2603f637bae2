package server

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/sse"
	"github.com/coachd/coachd/stream"
)

// statuses maps coachd error codes to HTTP statuses. A code not listed is
// answered as 500.
var statuses = map[string]int{
	coachd.EINVALID:        http.StatusBadRequest,
	coachd.EUNAUTHORIZED:   http.StatusUnauthorized,
	coachd.EFORBIDDEN:      http.StatusForbidden,
	coachd.ENOTFOUND:       http.StatusNotFound,
	coachd.ECONFLICT:       http.StatusConflict,
	coachd.ETURNINPROGRESS: http.StatusConflict,
	coachd.ETOOLARGE:       http.StatusRequestEntityTooLarge,
	coachd.EUNSUPPORTED:    http.StatusUnsupportedMediaType,
	coachd.EBUDGET:         http.StatusPaymentRequired,
	coachd.ERATELIMITED:    http.StatusTooManyRequests,
	coachd.EUPSTREAMBUSY:   http.StatusServiceUnavailable,
	stream.CodeShutdown:    http.StatusServiceUnavailable, // a turn cut by the server's drain (retryable)
	coachd.EUPSTREAMAUTH:   http.StatusBadGateway,
	coachd.EAPI:            http.StatusBadGateway,
	coachd.ETIMEOUT:        http.StatusGatewayTimeout,
	coachd.EINTERNAL:       http.StatusInternalServerError,
	coachd.EUNAVAILABLE:    http.StatusServiceUnavailable, // the database, for now (retryable)

	// The model's reply broke its agent's contract: its failure, named.
	agent.EContractViolation: http.StatusBadGateway,
}

// ErrorStatus returns the HTTP status for err's code.
func ErrorStatus(err error) int {
	if st, ok := statuses[coachd.ErrorCode(err)]; ok {
		return st
	}
	return http.StatusInternalServerError
}

// errorBody is the one error shape of the API: Error is errorValue's.
type errorBody struct {
	Error any `json:"error"`
}

type errorObject struct {
	Code    string              `json:"code"`
	Message string              `json:"message"`
	Details []coachd.FieldError `json:"details,omitempty"`
}

// Error answers err with its status and the JSON error body. Internal
// errors (and any code without a known status) are logged here, once, with
// the request id, and answered with a generic message: their text may hold
// SQL or file paths and is never shown to the caller.
func (s *Server) Error(w http.ResponseWriter, r *http.Request, err error) {
	e, status := s.answer(w, r, err)
	writeError(w, status, e)
}

// StreamError answers an error found before a stream started, on a stream
// endpoint: as an SSE error event in dialect, with the error's HTTP status
// and headers, so that both an HTTP-aware client and a reader that only
// parses events (seed 004's) see it. A client that asks for JSON only
// (Accept: application/json) gets the JSON body, and the ai-sdk dialect's
// (useChat) the message as plain text.
func (s *Server) StreamError(w http.ResponseWriter, r *http.Request, dialect string, err error) {
	e, status := s.answer(w, r, err)
	if accept := r.Header.Get("Accept"); strings.Contains(accept, "application/json") && !strings.Contains(accept, "text/event-stream") {
		writeError(w, status, e)
		return
	}
	if dialect == sse.AISDK {
		// useChat's transport makes a body that is not 2xx the error's
		// message as it is; it never reads it as a stream.
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(status)
		io.WriteString(w, uiErrorText(e))
		return
	}
	sw := sse.NewWriter(w, r, dialect, -1)
	sw.SetWriteTimeout(s.writeTime)
	sw.SetStatus(status)
	sw.Send(coachd.Event{Type: coachd.EventError, Err: e})
	sw.Close()
}

// maxUIErrorText bounds the text of an error useChat shows.
const maxUIErrorText = 2000

// uiErrorText is e as useChat shows it, its message the whole of it:
// "N invalid fields" with each field's problem, up to maxUIErrorText.
func uiErrorText(e *coachd.Error) string {
	if len(e.Details) < 2 {
		return e.Message
	}
	var sb strings.Builder
	sb.WriteString(e.Message)
	for i, d := range e.Details {
		sep := ": "
		if i > 0 {
			sep = "; "
		}
		line := sep + d.String()
		if sb.Len()+len(line) > maxUIErrorText {
			sb.WriteString("; …")
			break
		}
		sb.WriteString(line)
	}
	return sb.String()
}

// answer logs err as it deserves, sets its headers (Retry-After,
// WWW-Authenticate) and returns what may be shown of it, with its status.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, err error) (*coachd.Error, int) {
	e := coachd.AsError(err)
	status := ErrorStatus(e)
	if e.Code == coachd.ERATELIMITED {
		s.observer.Rejected(e.Code)
	}
	log := s.log(r)
	switch {
	case e.Code == coachd.EINTERNAL || statuses[e.Code] == 0:
		log.Error("internal error", "method", r.Method, "path", r.URL.Path, "err", err)
		e = &coachd.Error{Code: coachd.EINTERNAL, Message: "internal error; quote request id " + RequestIDFrom(r.Context()) + " when reporting it"}
		status = http.StatusInternalServerError
	case e.Code == coachd.EUNAVAILABLE:
		log.Warn("database unavailable", "method", r.Method, "path", r.URL.Path, "err", err)
	case status >= 500:
		log.Warn("upstream error", "code", e.Code, "err", err)
	}
	if secs := e.RetryAfterSeconds(); secs > 0 {
		w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	} else if e.Code == coachd.ERATELIMITED || e.Code == coachd.EUPSTREAMBUSY || e.Code == coachd.EUNAVAILABLE {
		w.Header().Set("Retry-After", "1")
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="coachd"`)
	}
	return e, status
}

// writeError writes the error body. Extra fields of e sit next to code and
// message (for example usage and limit on rate_limit_exceeded).
func writeError(w http.ResponseWriter, status int, e *coachd.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(errorBody{Error: errorValue(e)})
}

// errorValue is e's error object, the value of an error body's "error".
func errorValue(e *coachd.Error) any {
	if len(e.Extra) == 0 {
		return errorObject{Code: e.Code, Message: e.Message, Details: e.Details}
	}
	obj := make(map[string]any, len(e.Extra)+3)
	for k, v := range e.Extra {
		obj[k] = v
	}
	obj["code"], obj["message"] = e.Code, e.Message
	if len(e.Details) > 0 {
		obj["details"] = e.Details
	}
	return obj
}

// notFound is the one answer for a resource that is missing, belongs to
// someone else, or has an ID that could not exist: all three must look the
// same to the caller.
func notFound(kind string) error {
	return coachd.Errorf(coachd.ENOTFOUND, "%s not found", kind)
}

// orNotFound replaces a store's ENOTFOUND with the uniform notFound answer
// so that its wording cannot tell "missing" from "someone else's".
func orNotFound(err error, kind string) error {
	if coachd.ErrorCode(err) == coachd.ENOTFOUND {
		return notFound(kind)
	}
	return err
}

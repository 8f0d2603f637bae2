package server

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/coachd/coachd"
)

// DefaultBodyTimeout is how long a request body may take to arrive when
// Deps.BodyTimeout is zero: a full 1 MiB body fits at ~35 KB/s.
const DefaultBodyTimeout = 30 * time.Second

// withBody bounds every request body in size (decode reports the overflow
// as 413) and in time, so that a client trickling its body cannot hold a
// connection and a goroutine for as long as it likes.
//
// Authentication never reads the body, but net/http reads what is left of
// it (up to 256 KiB) before it sends any response to a request whose body
// was not read, to keep the connection: a slow client with a wrong key
// would wait for its 401 as long as its body took. So a response that goes
// out before the body was read to its end closes the connection instead
// (bodyGuard), and the 401, 404 or 415 goes out at once.
func (s *Server) withBody(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			h.ServeHTTP(w, r)
			return
		}
		limit, timeout := s.bodyLimits(r)
		if timeout > 0 {
			// A deadline on the connection, not a whole-request
			// http.Server.ReadTimeout: net/http lifts it by itself once
			// the body is read to its end, so a stream answering this
			// request may last as long as it needs.
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(timeout))
		}
		b := &trackedBody{ReadCloser: http.MaxBytesReader(w, r.Body, limit)}
		r.Body = b
		h.ServeHTTP(&bodyGuard{ResponseWriter: w, body: b}, r)
	})
}

// trackedBody remembers whether the body was read to its end.
type trackedBody struct {
	io.ReadCloser
	eof atomic.Bool
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.eof.Store(true)
	}
	return n, err
}

// bodyGuard asks for the connection to be closed after a response that
// starts before the request body was read to its end (see withBody).
type bodyGuard struct {
	http.ResponseWriter
	body    *trackedBody
	started bool
}

func (g *bodyGuard) start() {
	if !g.started {
		g.started = true
		if !g.body.eof.Load() {
			g.Header().Set("Connection", "close")
		}
	}
}

func (g *bodyGuard) WriteHeader(status int) {
	g.start()
	g.ResponseWriter.WriteHeader(status)
}

func (g *bodyGuard) Write(p []byte) (int, error) {
	g.start()
	return g.ResponseWriter.Write(p)
}

func (g *bodyGuard) Flush() {
	g.start()
	if f, ok := g.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (g *bodyGuard) Unwrap() http.ResponseWriter { return g.ResponseWriter }

// bodyTimeoutError is decode's answer to a body that did not arrive within
// the body timeout, or nil when err is something else.
func bodyTimeoutError(err error) error {
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		return nil
	}
	return &coachd.Error{Code: coachd.EINVALID, Message: "request body did not arrive in time; send it whole, without pauses", Err: err}
}

// noNUL refuses a NUL (U+0000) in any string or key of a JSON body read by
// decodeForeign: encoding/json lets it through and PostgreSQL TEXT cannot
// hold it. The error names the field, as unmarshalStrict's does. A body
// that is not JSON is left for its decoder to refuse.
func noNUL(body []byte) error { return noNULAt("", body) }

// noNULAt is noNUL for a value read at the pointer at of its body, which
// the field the error names starts with.
func noNULAt(at jsontext.Pointer, body []byte) error {
	// Valid JSON can only spell a NUL as an escape.
	if !bytes.Contains(body, []byte(`\u0000`)) {
		return nil
	}
	dec := jsontext.NewDecoder(bytes.NewReader(body), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil
		}
		if tok.Kind() == '"' && strings.IndexByte(tok.String(), 0) >= 0 {
			return coachd.Invalid(coachd.FieldError{Field: fieldPath(at + dec.StackPointer()), Message: "must not contain NUL (U+0000) characters", Code: "nul"})
		}
		if dec.StackDepth() == 0 {
			return nil
		}
	}
}

// Package anthropictest is a fake Anthropic Messages API served over HTTP:
// scripted turns, replay of recorded streams and cassettes, fault
// injection, request recording and deterministic usage. The real SDK talks
// to it as it would to api.anthropic.com.
package anthropictest

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coachd/coachd"
)

// Server is the fake. Its methods are safe for concurrent use.
type Server struct {
	ts *httptest.Server

	mu          sync.Mutex
	apiKey      string
	queue       []Reply
	script      func(*Request) Reply
	requests    []Request
	cache       map[[32]byte]cacheEntry // prefixes written by earlier requests (cache.go)
	clock       coachd.Clock
	n           int                  // messages served, for ids
	count       int64                // SetCount: count_tokens answers this when > 0
	counter     func(*Request) int64 // SetCounter
	disconnects chan time.Time
	norecord    bool        // SetRecording(false)
	chaos       *chaosState // SetChaos
	closed      chan struct{}
	closeOnce   sync.Once
}

// New returns a fake that is not listening: serve its Handler yourself
// (`coachd fake-anthropic --addr`).
func New() *Server {
	return &Server{
		cache:       map[[32]byte]cacheEntry{},
		disconnects: make(chan time.Time, 256),
		closed:      make(chan struct{}),
	}
}

// NewServer starts a fake on a loopback port. Close it when done.
func NewServer() *Server {
	s := New()
	s.ts = httptest.NewServer(s.Handler())
	return s
}

// URL is the base URL to give the SDK (option.WithBaseURL).
func (s *Server) URL() string { return s.ts.URL }

// Close stops the server, ending stalled streams first.
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.closed) })
	if s.ts != nil {
		s.ts.Close()
	}
}

// SetAPIKey makes the fake accept only key; by default any non-empty key.
func (s *Server) SetAPIKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.apiKey = key
}

// SetCount makes count_tokens answer n input tokens (0: from the request's
// size, the default; negative: fail with 529 overloaded, as the API does
// under load).
func (s *Server) SetCount(n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.count = n
}

// SetCounter makes count_tokens answer f of each request (nil: as
// SetCount says), for a test whose tokenizer is not a token per 4 bytes.
func (s *Server) SetCounter(f func(*Request) int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counter = f
}

// Enqueue adds replies, served in order, one per POST /v1/messages.
func (s *Server) Enqueue(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// SetScript answers requests once the queue is empty. Without a script
// the fake echoes the last user text.
func (s *Server) SetScript(f func(req *Request) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = f
}

// SetRecording turns the request log (Requests) on or off; a long load
// test turns it off so the fake's memory stays flat.
func (s *Server) SetRecording(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.norecord = !on
}

// Requests returns every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Disconnects delivers the time of each client disconnect the fake saw
// before it had finished a reply (a cancelled stream, a stalled one).
func (s *Server) Disconnects() <-chan time.Time { return s.disconnects }

// Handler serves the fake API.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", s.messages)
	mux.HandleFunc("POST /v1/messages/count_tokens", s.countTokens)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &apiError{http.StatusNotFound, "not_found_error", "Not found"}, "")
	})
	return mux
}

// receive records the request and checks headers and body.
func (s *Server) receive(w http.ResponseWriter, r *http.Request, countOnly bool) (*Request, string, bool) {
	raw, err := io.ReadAll(r.Body)
	// The body is decoded once, outside the lock; the generic map and a
	// copy of the headers only for the request log.
	s.mu.Lock()
	s.n++
	n, record := s.n, !s.norecord
	s.mu.Unlock()
	reqID := fakeID("req_fake_", n)
	rec := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header, Raw: raw, At: time.Now(), index: -1}
	if record {
		rec.Header = r.Header.Clone()
		if json.Unmarshal(raw, &rec.Body) != nil {
			rec.Body = nil
		}
	}
	wire, perr := parseRequest(raw, countOnly)
	if wire != nil {
		rec.wire, rec.Stream, rec.Model = wire, wire.Stream, wire.Model
	}
	s.mu.Lock()
	if record {
		rec.index = len(s.requests)
		s.requests = append(s.requests, rec)
	}
	key := s.apiKey
	s.mu.Unlock()

	var aerr *apiError
	got := r.Header.Get("x-api-key")
	if got == "" {
		got = strings.TrimPrefix(r.Header.Get("authorization"), "Bearer ")
	}
	switch {
	case err != nil:
		aerr = invalid("reading body: %v", err)
	case got == "":
		aerr = &apiError{http.StatusUnauthorized, "authentication_error", "x-api-key header is required"}
	case key != "" && got != key:
		aerr = &apiError{http.StatusUnauthorized, "authentication_error", "invalid x-api-key"}
	case r.Header.Get("anthropic-version") == "":
		aerr = invalid("anthropic-version: header is required")
	case perr != nil:
		aerr = perr.(*apiError)
	}
	if aerr != nil {
		writeError(w, aerr, reqID)
		return nil, "", false
	}
	return &rec, reqID, true
}

func (s *Server) countTokens(w http.ResponseWriter, r *http.Request) {
	req, reqID, ok := s.receive(w, r, true)
	if !ok {
		return
	}
	n := int64(0)
	if segs := req.wire.segments(); len(segs) > 0 {
		n = tokens(segs[len(segs)-1].size)
	}
	s.mu.Lock()
	count, counter := s.count, s.counter
	s.mu.Unlock()
	if counter != nil {
		count = max(counter(req), 1)
	}
	if count < 0 {
		writeError(w, &apiError{status: 529, typ: "overloaded_error", msg: "Overloaded"}, reqID)
		return
	}
	if count > 0 {
		n = count
	}
	w.Header().Set("request-id", reqID)
	w.Header().Set("content-type", "application/json")
	fmt.Fprintf(w, `{"input_tokens":%d}`, n)
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	req, reqID, ok := s.receive(w, r, false)
	if !ok {
		return
	}
	reply := s.inject(s.next(req))
	w.Header().Set("request-id", reqID)
	if reply.err != nil {
		writeError(w, &apiError{http.StatusInternalServerError, "api_error", "anthropictest: " + reply.err.Error()}, reqID)
		return
	}
	if reply.Status != 0 && reply.Status != http.StatusOK {
		s.status(w, reply, reqID)
		return
	}
	id, model, u := s.identity(req, reply)
	var (
		events []Event
		body   []byte
		err    error
	)
	switch {
	case len(reply.Events) > 0:
		events = reply.Events
		if !req.Stream {
			body, err = assemble(events)
		}
	case len(reply.Message) > 0:
		body = reply.Message
		if req.Stream {
			var mr Reply
			if mr, err = messageReply(reply.Message); err == nil {
				events = mr.events(mr.ID, mr.Model, *mr.Usage)
			}
		}
	case req.Stream:
		events = reply.events(id, model, u)
	default:
		body = reply.message(id, model, u)
	}
	if err != nil {
		writeError(w, &apiError{http.StatusInternalServerError, "api_error", err.Error()}, reqID)
		return
	}
	copyHeader(w.Header(), reply.Header)
	out, finish := s.body(w, r, reply)
	if !req.Stream {
		w.Header().Set("content-type", "application/json")
		w.WriteHeader(http.StatusOK)
		out.Write(body)
		finish()
		return
	}
	s.stream(w, r, out, finish, events, reply)
}

// next picks the reply: the queue, then the script, then an echo.
func (s *Server) next(req *Request) Reply {
	s.mu.Lock()
	if len(s.queue) > 0 {
		reply := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		return reply
	}
	script := s.script
	s.mu.Unlock()
	if script != nil {
		return script(req)
	}
	return Text("(anthropictest) you said: "+req.LastUserText(), 8)
}

// identity fills a scripted reply's id, model and usage.
func (s *Server) identity(req *Request, reply Reply) (string, string, coachd.Usage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := reply.ID
	if id == "" {
		id = fakeID("msg_fake_", s.n)
	}
	model := reply.Model
	if model == "" {
		model = req.Model
	}
	u := s.account(req.wire)
	u.OutputTokens = tokens(reply.outputText())
	if reply.Usage != nil {
		u = *reply.Usage
	}
	if req.index >= 0 {
		s.requests[req.index].Usage = u
	}
	return id, model, u
}

func (s *Server) status(w http.ResponseWriter, reply Reply, reqID string) {
	copyHeader(w.Header(), reply.Header)
	body := reply.Body
	if len(body) == 0 {
		msg := http.StatusText(reply.Status)
		if reply.Status == 529 {
			msg = "Overloaded"
		}
		body = errorBody(errorType(reply.Status), msg, reqID)
	}
	if w.Header().Get("content-type") == "" {
		w.Header().Set("content-type", "application/json")
	}
	w.WriteHeader(reply.Status)
	w.Write(body)
}

// body returns the writer for the reply body, gzipped when asked and
// accepted, and a func that flushes it to the client.
func (s *Server) body(w http.ResponseWriter, r *http.Request, reply Reply) (io.Writer, func()) {
	flusher, _ := w.(http.Flusher)
	flush := func() {
		if flusher != nil {
			flusher.Flush()
		}
	}
	if !reply.Gzip || !strings.Contains(r.Header.Get("accept-encoding"), "gzip") {
		return w, flush
	}
	w.Header().Set("content-encoding", "gzip")
	gz := gzip.NewWriter(w)
	return gz, func() { gz.Flush(); flush() }
}

func (s *Server) stream(w http.ResponseWriter, r *http.Request, out io.Writer, flush func(), events []Event, reply Reply) {
	w.Header().Set("content-type", "text/event-stream; charset=utf-8")
	w.Header().Set("cache-control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flush()
	ctx := r.Context()
	wait := func(d time.Duration) bool {
		if d <= 0 {
			return ctx.Err() == nil
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-ctx.Done():
			return false
		case <-s.closed:
			return false
		}
	}
	f := reply.Fault
	for i, ev := range events {
		if f.Kind != NoFault && i == f.After {
			s.fault(ctx, w, out, flush, f)
			return
		}
		delay := reply.EventDelay
		if i == 0 {
			delay = reply.FirstEventDelay
		}
		if !wait(delay) {
			s.disconnected(ctx)
			return
		}
		pad := 0
		if reply.Pad && ev.Name != "ping" {
			pad = 1 + (i*7)%13
		}
		if writeEvent(out, ev, pad) != nil {
			s.disconnected(ctx)
			return
		}
		flush()
	}
	if f.Kind != NoFault && f.After >= len(events) {
		s.fault(ctx, w, out, flush, f)
		return
	}
	if c, ok := out.(io.Closer); ok {
		c.Close()
	}
}

func (s *Server) fault(ctx context.Context, w http.ResponseWriter, out io.Writer, flush func(), f Fault) {
	switch f.Kind {
	case FaultError:
		typ, msg := f.ErrorType, f.Message
		if typ == "" {
			typ, msg = "overloaded_error", "Overloaded"
		}
		data, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
		writeEvent(out, Event{Name: "error", Data: data}, 0)
		if c, ok := out.(io.Closer); ok {
			c.Close()
		}
		flush()
	case FaultDrop:
		flush()
		panic(http.ErrAbortHandler) // net/http closes the connection without ending the body
	case FaultReset:
		flush()
		reset(w)
	case FaultStall:
		flush()
		select {
		case <-ctx.Done():
			s.disconnected(ctx)
		case <-s.closed:
		}
	}
}

// disconnected records a client that went away mid-reply.
func (s *Server) disconnected(ctx context.Context) {
	if ctx.Err() == nil {
		return
	}
	select {
	case s.disconnects <- time.Now():
	default:
	}
}

// copyHeader copies a reply's headers, canonicalised, leaving out those
// that describe a recorded transfer rather than the response.
func copyHeader(dst, src http.Header) {
	for k, vs := range src {
		switch k = http.CanonicalHeaderKey(k); k {
		case "Content-Length", "Transfer-Encoding", "Connection", "Content-Encoding":
			continue
		}
		dst[k] = append([]string(nil), vs...)
	}
}

// fakeID is prefix and n in at least six digits.
func fakeID(prefix string, n int) string {
	b := make([]byte, 0, len(prefix)+8)
	b = append(b, prefix...)
	for d := 100000; d > 1 && n < d; d /= 10 {
		b = append(b, '0')
	}
	return string(strconv.AppendInt(b, int64(n), 10))
}

func errorBody(typ, msg, reqID string) []byte {
	body, _ := json.Marshal(map[string]any{"type": "error",
		"error": map[string]string{"type": typ, "message": msg}, "request_id": reqID})
	return body
}

func writeError(w http.ResponseWriter, e *apiError, reqID string) {
	if reqID != "" {
		w.Header().Set("request-id", reqID)
	}
	w.Header().Set("content-type", "application/json")
	if e.status == 529 || e.status == 429 {
		w.Header().Set("x-should-retry", "true")
	}
	w.WriteHeader(e.status)
	w.Write(errorBody(e.typ, e.msg, reqID))
}

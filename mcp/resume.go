package mcp

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"time"
)

// A proxy in front of an HTTP server (nginx's proxy_read_timeout, a load
// balancer's idle timeout) cuts the event stream each time it has been
// quiet for a while, and a server's stream is quiet between its tool
// changes. The SDK opens the stream again, but counts each opening whose
// stream brought no new event id as a failed attempt, and after 5 it
// ends the session: the server was taken as crashed every few minutes,
// and a call under way then failed. resumeBody opens the stream again
// itself, under the SDK, when a stream that lasted ends between events.

// streamMinLife is how long an event stream must have lasted to be
// opened again when it ends: one that ends sooner (a server that closes
// it at once) is left to the SDK, which gives up. The first of a run of
// streams that brought no event is opened again at once (a proxy's idle
// cut); each next one after the server's backoff, growing: a server
// that ended every stream a little after streamMinLife was asked for a
// new one each second, for as long as it ran.
const streamMinLife = time.Second

// maxStreamRetry bounds the wait a server's retry field asks for.
const maxStreamRetry = 30 * time.Second

// resumeBody is an event stream that, when it ends between events after
// streamMinLife, goes on with a stream opened again (with the last event
// id the server sent): the SDK reads one stream. A stream that ends
// sooner or mid-event, or that cannot be opened again, ends as it did.
// The SDK reads and closes it from one goroutine.
type resumeBody struct {
	t     streamTransport
	req   *http.Request
	body  io.ReadCloser
	since time.Time
	tail  sseTail
	err   error // the stream's end, returned after the bytes read with it
	quiet int   // streams in a row that ended without an event
	seen  int   // tail.events when the current stream opened
}

func (b *resumeBody) Read(p []byte) (int, error) {
	for {
		if b.err == nil {
			n, err := b.body.Read(p)
			b.tail.scan(p[:n])
			if err == nil || n > 0 {
				b.err = err
				return n, nil
			}
			b.err = err
		}
		if !b.resume() {
			return 0, b.err
		}
		b.err = nil
	}
}

// resume opens the stream again in place of the one that ended, when it
// may.
func (b *resumeBody) resume() bool {
	ctx := b.req.Context()
	if ctx.Err() != nil || time.Since(b.since) < streamMinLife || !b.tail.between() {
		return false
	}
	if b.tail.events > b.seen || time.Since(b.since) >= b.t.backoff.Max {
		b.quiet = 0 // a stream that lasted the longest wait is no flood
	}
	b.quiet++
	d := min(b.tail.retry, maxStreamRetry)
	if b.quiet > 1 {
		d = max(d, b.t.backoff.delay(b.quiet-1))
		if b.quiet == 2 {
			b.t.log.Warn("mcp server's event stream keeps ending without an event; it is opened again after a growing wait",
				"lasted", time.Since(b.since).Round(time.Millisecond), "wait", d)
		}
	}
	if d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return false
		}
	}
	r := b.req.Clone(ctx)
	if b.tail.id != "" {
		r.Header.Set("Last-Event-ID", b.tail.id)
	}
	resp, err := b.t.open(r)
	if err != nil {
		return false
	}
	if !eventStream(resp) {
		resp.Body.Close()
		return false
	}
	b.body.Close()
	b.body, b.since, b.seen = resp.Body, time.Now(), b.tail.events
	b.t.log.Debug("mcp server's event stream ended; opened again", "err", b.err, "quiet_streams", b.quiet)
	return true
}

func (b *resumeBody) Close() error { return b.body.Close() }

// sseTail follows an event stream's lines as far as resumeBody needs:
// whether it is between events, and its last id and retry fields.
type sseTail struct {
	line    []byte // the current line's first bytes
	n       int    // the current line's length
	cr      bool   // the last line ended with \r (a \n may follow)
	pending bool   // a field was read since the last blank line
	data    bool   // a data field was read since the last blank line
	events  int    // events with data (messages) the stream brought
	id      string
	retry   time.Duration
}

// maxTailLine bounds what is kept of a line: ids and retries are short.
const maxTailLine = 256

func (s *sseTail) scan(p []byte) {
	for _, c := range p {
		if s.cr && c == '\n' {
			s.cr = false
			continue
		}
		s.cr = false
		if c == '\r' || c == '\n' {
			s.cr = c == '\r'
			s.endLine()
			continue
		}
		if s.n++; len(s.line) < maxTailLine {
			s.line = append(s.line, c)
		}
	}
}

func (s *sseTail) endLine() {
	line, whole := s.line, s.n == len(s.line)
	defer func() { s.line, s.n = s.line[:0], 0 }()
	switch {
	case s.n == 0: // a blank line ends the event
		if s.data {
			s.events++
		}
		s.pending, s.data = false, false
		return
	case line[0] == ':': // a comment
		return
	}
	s.pending = true
	name, value, _ := bytes.Cut(line, []byte(":"))
	value = bytes.TrimPrefix(value, []byte(" "))
	switch string(name) {
	case "data": // the SDK skips an event whose data is empty
		s.data = s.data || len(value) > 0
	case "id":
		if whole && bytes.IndexByte(value, 0) < 0 {
			s.id = string(value)
		}
	case "retry":
		if ms, err := strconv.ParseInt(string(value), 10, 64); err == nil && ms >= 0 && whole {
			s.retry = time.Duration(min(ms, int64(maxStreamRetry/time.Millisecond))) * time.Millisecond
		}
	}
}

// between reports whether the stream ended between events.
func (s *sseTail) between() bool { return !s.pending && s.n == 0 }

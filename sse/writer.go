package sse

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coachd/coachd"
)

// DefaultHeartbeat is the heartbeat interval when NewWriter is given 0.
const DefaultHeartbeat = 30 * time.Second

// DefaultWriteTimeout bounds each write (an event or a heartbeat) unless
// SetWriteTimeout says otherwise.
const DefaultWriteTimeout = 10 * time.Second

// ErrClosed is returned by Send after Close.
var ErrClosed = errors.New("sse: writer closed")

// Writer streams events to one HTTP response. It is a coachd.EventSink:
// Send is safe for concurrent use, each event is flushed as it is written,
// and a heartbeat comment keeps idle connections (and the proxies on the
// way) open. Once the client is gone, Send returns an error and the turn
// can stop. A client that stays connected but stops reading is gone too:
// each write has a deadline, and one that cannot finish in time fails.
//
// Close (or End) must be called before the handler returns: it writes the
// dialect's closing bytes and stops the heartbeat goroutine, which must not
// touch the ResponseWriter after the handler is done.
type Writer struct {
	ctx       context.Context
	dialect   string
	heartbeat time.Duration

	mu      sync.Mutex
	w       http.ResponseWriter
	rc      *http.ResponseController
	buf     []byte
	started bool      // headers written
	last    time.Time // last write, for the heartbeat
	err     error     // sticky: first write failure or disconnect
	closed  bool
	ending  bool           // End: the closing writes are left for the server to flush
	errored bool           // an error event of the turn went out
	status  int            // the HTTP status sent with the headers (200 unless SetStatus)
	ai      *aiState       // the ai-sdk dialect's open parts
	held    []byte         // sage: the round's toolCall frames, until its message is complete
	heldID  coachd.EventID // sage: the first tool_call_started held (or dropped for split)
	split   bool           // sage: the round has a split-conversation tool
	tooled  bool           // sage: toolCalls went out since the last roundBoundary
	timeout time.Duration  // per write; 0: none
	stuck   *time.Timer    // armed during a write when timeout > 0

	stop chan struct{} // closed by Close
	done chan struct{} // closed when the heartbeat goroutine exits
}

var _ coachd.EventSink = (*Writer)(nil)

// NewWriter returns a Writer for the response to r in dialect; an empty or
// unknown dialect means coachd (callers validate ?protocol= with
// ValidDialect first). A zero heartbeat means DefaultHeartbeat, a negative
// one turns heartbeats off. Headers are sent with the first write (an event
// or a heartbeat), so nothing is committed until then.
func NewWriter(w http.ResponseWriter, r *http.Request, dialect string, heartbeat time.Duration) *Writer {
	if !ValidDialect(dialect) {
		dialect = Coachd
	}
	if heartbeat == 0 {
		heartbeat = DefaultHeartbeat
	}
	sw := &Writer{
		ctx:       r.Context(),
		dialect:   dialect,
		heartbeat: heartbeat,
		timeout:   DefaultWriteTimeout,
		w:         w,
		rc:        http.NewResponseController(w),
		last:      time.Now(),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
	}
	if dialect == AISDK {
		sw.ai = &aiState{}
	}
	close(sw.done) // heartbeats come from the shared heart (heartbeat.go)
	if heartbeat > 0 {
		join(sw)
	}
	return sw
}

// SetStatus sets the HTTP status the headers go out with (default 200):
// an error found before the stream started is still an SSE stream. It has
// no effect once anything was written.
func (w *Writer) SetStatus(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.status = code
}

// SetWriteTimeout sets how long each write may take before the client is
// taken for gone (DefaultWriteTimeout until then); d <= 0 is no limit.
func (w *Writer) SetWriteTimeout(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timeout = max(d, 0)
}

// Dialect returns the dialect the writer encodes.
func (w *Writer) Dialect() string { return w.dialect }

// Send encodes ev and writes and flushes it. Events the dialect drops write
// nothing. It returns an error once the client is gone (the request's
// context is done or a write failed) or after Close.
func (w *Writer) Send(ev coachd.Event) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	w.encode(ev)
	return w.flush()
}

// Queue encodes ev behind the events queued before it, to be written by
// the next Flush (or Send): a reader with several events at hand sends
// them in one write. It fails like Send.
func (w *Writer) Queue(ev coachd.Event) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	if err := w.check(); err != nil {
		return err
	}
	w.encode(ev)
	return nil
}

// Flush writes the queued events, if any.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flush()
}

// flush writes and empties w.buf. Callers hold mu.
func (w *Writer) flush() error {
	if len(w.buf) == 0 {
		return w.check()
	}
	err := w.write(w.buf)
	w.buf = w.buf[:0]
	return err
}

// encode appends ev's frames to w.buf. Callers hold mu.
func (w *Writer) encode(ev coachd.Event) {
	start := len(w.buf) // before holdSage: the frames it releases take ev's id
	if w.dialect == Sage && (len(w.held) > 0 || w.split) && ev.Type == coachd.EventError {
		ev = resumeBefore(ev, w.heldID)
	}
	if w.dialect == Sage && w.holdSage(ev) {
		return
	}
	switch ev.Type {
	case coachd.EventTurnStarted:
		w.errored = false // a turn whose log ended without its turn_ended
	case coachd.EventTurnEnded:
		// errored is the turn's: a session's stream goes on to the next.
		errored := w.errored
		w.errored = false
		if w.dialect == Coachd && errored {
			return // the coachd stream ends at its error
		}
		if !errored && w.tooled && (ev.StopReason == coachd.TurnDeadline || ev.StopReason == coachd.TurnToolLimit) {
			// Seed 002's 55 s guard fires at the top of an iteration,
			// after the last tool round's roundBoundary. A round past
			// the tool-call limit announced its calls: its roundBoundary
			// resets the client's shimmer counter, which only it does.
			w.buf = frame(w.buf, "", sageRoundBoundary{true})
		}
		w.tooled = false
		if !errored && w.ai == nil {
			w.buf = abnormalStop(w.buf, w.dialect, ev.StopReason)
		}
	}
	if w.ai != nil {
		w.buf = w.ai.encode(w.buf, ev)
	} else {
		w.buf = Encode(w.buf, w.dialect, ev)
	}
	if ev.Turn > 0 && len(w.buf) > start {
		w.buf = withID(w.buf, ev.ID()) // the last frame is this event's
	}
	if ev.Type == coachd.EventError {
		w.errored = true
	}
}

// holdSage keeps a sage round's toolCall frames until its tools are about
// to run (the first tool_call_ready, sent once the model's message is
// complete), drops them when the round has a split-conversation tool, and
// drops them when the message never completed (an error or the turn's end
// first): seed 002's loop sends its toolCalls after finalMessage, and none
// for a round it breaks on showOptions or showPulseCheck, and its client
// resets its shimmer counter only at a roundBoundary, which follows
// neither a pause nor an error. It reports whether ev was held. Callers
// hold mu.
func (w *Writer) holdSage(ev coachd.Event) bool {
	switch ev.Type {
	case coachd.EventToolCallStarted:
		if len(w.held) == 0 && !w.split {
			w.heldID = ev.ID()
		}
		if ev.ToolName == toolShowOptions || ev.ToolName == toolShowPulseCheck {
			w.split = true
			return true
		}
		// Without its id: the frames go out with the id of the event that
		// releases them, after any text of the message.
		w.held = encodeSage(w.held, ev)
		return true
	case coachd.EventToolCallReady:
		if !w.split {
			w.buf = append(w.buf, w.held...)
			w.tooled = w.tooled || len(w.held) > 0
		}
	case coachd.EventError, coachd.EventTurnEnded, coachd.EventTurnStarted:
	case coachd.EventRoundBoundary:
		w.tooled = false
		return false
	default:
		return false
	}
	w.held, w.split = w.held[:0], false
	if ev.Type == coachd.EventTurnStarted {
		w.tooled = false
	}
	return false
}

// resumeBefore is the error ev, when it says where to resume the stream
// (server_shutdown's last_event_id), resuming before held instead: the
// held frames are dropped with the stream, and a reader resumed after
// their events would never get them, though their round goes on (on
// another replica, say); nor would it know that the round has a split
// tool. The events since held sent no frame but a round's own tool
// calls, which the model's message ends with.
func resumeBefore(ev coachd.Event, held coachd.EventID) coachd.Event {
	if ev.Err == nil || ev.Err.Extra["last_event_id"] == nil || ev.ID().Before(held) {
		return ev
	}
	at := coachd.EventID{Turn: held.Turn, Seq: held.Seq - 1}
	e := *ev.Err
	e.Extra = maps.Clone(e.Extra)
	e.Extra["last_event_id"] = at.String()
	e.Message = strings.ReplaceAll(e.Message, ev.ID().String(), at.String())
	ev.Err, ev.Turn, ev.Seq = &e, at.Turn, at.Seq
	return ev
}

// withID gives the last frame in buf the event's id (an event may take
// more than one frame; a reader cut between them resumes before it).
func withID(buf []byte, id coachd.EventID) []byte {
	if len(buf) == 0 {
		return buf
	}
	start := bytes.LastIndex(buf[:len(buf)-2], []byte("\n\n"))
	start++
	if start > 0 {
		start++
	}
	var lb [48]byte // "id: " and two int64s: the line is built on the stack
	line := append(lb[:0], "id: "...)
	line = strconv.AppendInt(line, id.Turn, 10)
	line = append(line, ':')
	line = strconv.AppendInt(line, id.Seq, 10)
	line = append(line, '\n')
	buf = append(buf, line...)
	copy(buf[start+len(line):], buf[start:len(buf)-len(line)])
	copy(buf[start:], line)
	return buf
}

// SendData writes one unnamed frame whose data is v as JSON, for the
// wire formats that are not dialects of coachd.Event (OpenAI's chunks).
func (w *Writer) SendData(v any) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	w.buf = frame(w.buf, "", v)
	return w.flush()
}

// SendDone writes the data: [DONE] sentinel.
func (w *Writer) SendDone() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	return w.write(Done(Sage))
}

// Retry sends the reconnection delay hint (retry:) EventSource clients
// wait before they reconnect.
func (w *Writer) Retry(d time.Duration) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.write([]byte(fmt.Sprintf("retry: %d\n\n", d.Milliseconds())))
}

// Close writes the dialect's closing bytes (sage's [DONE]), makes sure the
// headers went out even if no event did, and stops the heartbeat. It
// returns the error that ended the stream, if any. Calling it twice is
// safe.
func (w *Writer) Close() error { return w.close(false) }

// End is Close for a handler that returns right after it: what was queued
// and the closing bytes are written but not flushed, so the server sends
// them with the response's last chunk, in one write. A turn's end then
// costs the server one system call fewer and the client one wakeup. The
// write timeout bounds that last write too: End sets the connection's
// write deadline, which the server clears once the response is done.
func (w *Writer) End() error { return w.close(true) }

// Abandon closes a Writer that has sent nothing yet (no event, no
// heartbeat, not even the headers) without sending anything, and reports
// whether it did: the handler then answers with a response of its own (an
// error's status and body). Once the stream has started it does nothing
// and reports false; Close must still be called.
func (w *Writer) Abandon() bool {
	w.mu.Lock()
	if w.started || w.closed {
		w.mu.Unlock()
		return false
	}
	w.closed = true
	close(w.stop)
	if w.heartbeat > 0 {
		leave(w)
	}
	w.mu.Unlock()
	<-w.done
	return true
}

func (w *Writer) close(ending bool) error {
	w.mu.Lock()
	if !w.closed {
		w.closed, w.ending = true, ending
		close(w.stop)
		if w.heartbeat > 0 {
			leave(w)
		}
		if w.flush() == nil { // what was queued, then the closing bytes
			_ = w.write(Done(w.dialect)) // sets w.err on failure
		}
		if ending && w.err == nil && w.timeout > 0 {
			_ = w.rc.SetWriteDeadline(time.Now().Add(w.timeout))
		}
	}
	err := w.err
	w.mu.Unlock()
	<-w.done
	return err
}

// check returns the sticky error, recording a disconnect first. Callers
// hold mu.
func (w *Writer) check() error {
	if w.err == nil && w.ctx.Err() != nil {
		w.err = fmt.Errorf("sse: client gone: %w", context.Cause(w.ctx))
	}
	return w.err
}

// write sends the headers on first use, then p, then flushes (but for
// End's writes). An empty p only sends the headers. Callers hold mu.
func (w *Writer) write(p []byte) error {
	if err := w.check(); err != nil {
		return err
	}
	if w.timeout > 0 {
		// Without a bound a client that never reads blocks this write
		// once the socket buffers are full, and with it the turn, its
		// session's lock and its budget reservation, past any turn limit.
		// The deadline is set only on a write still blocked after the
		// timeout, not ahead of every write: a write deadline set on every
		// event cut streams a few milliseconds in under load (e2e, -race).
		// A ResponseWriter without deadlines (a recorder) just streams.
		// One timer per Writer, re-armed for each write.
		if w.stuck == nil {
			w.stuck = time.AfterFunc(w.timeout, func() { _ = w.rc.SetWriteDeadline(time.Now()) })
		} else {
			w.stuck.Reset(w.timeout)
		}
		defer func() {
			if !w.stuck.Stop() {
				_ = w.rc.SetWriteDeadline(time.Time{})
			}
		}()
	}
	if !w.started {
		w.started = true
		h := w.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no")
		h.Set("Connection", "keep-alive")
		if w.dialect == AISDK {
			h.Set("X-Vercel-AI-UI-Message-Stream", "v1")
		}
		status := w.status
		if status == 0 {
			status = http.StatusOK
		}
		w.w.WriteHeader(status)
	}
	if len(p) > 0 {
		if _, err := w.w.Write(p); err != nil {
			w.err = fmt.Errorf("sse: write: %w", err)
			return w.err
		}
	}
	if w.ending {
		return nil // End: the server flushes them with the response's end
	}
	// A ResponseWriter that cannot flush still got the bytes; streaming
	// through it is the wrapper's problem, not a reason to end the turn.
	if err := w.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		w.err = fmt.Errorf("sse: flush: %w", err)
		return w.err
	}
	w.last = time.Now()
	return nil
}

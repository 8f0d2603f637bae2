package sse_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sse"
)

// wait bounds a wait on a channel so that a broken writer fails the test
// instead of hanging it; it is a guard, not a synchronisation.
const wait = 10 * time.Second

func text(s string) coachd.Event { return coachd.Event{Type: coachd.EventTextDelta, Text: s} }

// MustGet starts a streaming GET and returns the response and a reader of
// its body. Cancel ctx to disconnect.
func MustGet(tb testing.TB, ctx context.Context, url string) (*http.Response, *bufio.Reader) {
	tb.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		tb.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { resp.Body.Close() })
	return resp, bufio.NewReader(resp.Body)
}

// readFrame reads one SSE frame (through the blank line) from the stream.
func readFrame(tb testing.TB, r *bufio.Reader) string {
	tb.Helper()
	var sb strings.Builder
	for {
		line, err := r.ReadString('\n')
		sb.WriteString(line)
		if err != nil {
			tb.Fatalf("reading frame after %q: %v", sb.String(), err)
		}
		if line == "\n" {
			return sb.String()
		}
	}
}

func TestWriter(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		events := make(chan coachd.Event, 1)
		closed := make(chan error, 1)
		srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			w := sse.NewWriter(rw, r, sse.Sage, time.Hour)
			for ev := range events {
				if err := w.Send(ev); err != nil {
					t.Errorf("Send: %v", err)
				}
			}
			closed <- w.Close()
		}))
		defer srv.Close()

		// The handler holds the response open between events, so reading
		// each frame before sending the next proves it was flushed.
		events <- text("hello")
		resp, body := MustGet(t, context.Background(), srv.URL)
		for k, want := range map[string]string{
			"Content-Type":      "text/event-stream",
			"Cache-Control":     "no-cache",
			"X-Accel-Buffering": "no",
			"Connection":        "keep-alive",
		} {
			if got := resp.Header.Get(k); got != want {
				t.Errorf("header %s = %q, want %q", k, got, want)
			}
		}
		if got, want := readFrame(t, body), "data: {\"text\":\"hello\"}\n\n"; got != want {
			t.Errorf("first frame = %q, want %q", got, want)
		}
		events <- coachd.Event{Type: coachd.EventTurnStarted} // dropped by sage
		events <- text("world")
		if got, want := readFrame(t, body), "data: {\"text\":\"world\"}\n\n"; got != want {
			t.Errorf("second frame = %q, want %q", got, want)
		}
		close(events)
		rest, err := io.ReadAll(body)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := string(rest), "data: [DONE]\n\n"; got != want {
			t.Errorf("after Close = %q, want %q", got, want)
		}
		if err := <-closed; err != nil {
			t.Errorf("Close: %v", err)
		}
	})

	t.Run("Heartbeat", func(t *testing.T) {
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			w := sse.NewWriter(rw, r, sse.Coachd, 5*time.Millisecond)
			defer w.Close()
			<-release
			if err := w.Send(coachd.Event{Type: coachd.EventRoundBoundary}); err != nil {
				t.Errorf("Send: %v", err)
			}
		}))
		defer srv.Close()
		defer close(release)

		// No event has been sent: the heartbeat alone commits the headers
		// and keeps arriving while the stream is idle.
		resp, body := MustGet(t, context.Background(), srv.URL)
		if got := resp.Header.Get("Content-Type"); got != "text/event-stream" {
			t.Errorf("Content-Type = %q", got)
		}
		for i := 0; i < 3; i++ {
			if got := readFrame(t, body); got != ": ping\n\n" {
				t.Fatalf("frame %d = %q, want a ping", i, got)
			}
		}
	})

	t.Run("ErrDisconnected", func(t *testing.T) {
		first := make(chan struct{})
		sendErr := make(chan error, 1)
		srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			w := sse.NewWriter(rw, r, sse.Coachd, -1)
			defer w.Close()
			if err := w.Send(text("first")); err != nil {
				t.Errorf("first Send: %v", err)
			}
			close(first)
			for {
				if err := w.Send(text("more")); err != nil {
					if err2 := w.Send(text("again")); err2 == nil {
						t.Errorf("Send after an error succeeded")
					}
					sendErr <- err
					return
				}
				select { // pace the writes; the loop ends on Send's error
				case <-time.After(time.Millisecond):
				case <-r.Context().Done():
				}
			}
		}))
		defer srv.Close()

		ctx, cancel := context.WithCancel(context.Background())
		_, body := MustGet(t, ctx, srv.URL)
		<-first
		if got := readFrame(t, body); !strings.Contains(got, "first") {
			t.Fatalf("first frame = %q", got)
		}
		cancel()
		select {
		case err := <-sendErr:
			t.Logf("Send after disconnect: %v", err)
		case <-time.After(wait):
			t.Fatal("Send kept succeeding after the client left")
		}
	})

	t.Run("ErrContextDone", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		rec := httptest.NewRecorder()
		w := sse.NewWriter(rec, httptest.NewRequestWithContext(ctx, "GET", "/", nil), sse.Sage, -1)
		if err := w.Send(text("x")); !errors.Is(err, context.Canceled) {
			t.Errorf("Send = %v, want context.Canceled", err)
		}
		if err := w.Close(); !errors.Is(err, context.Canceled) {
			t.Errorf("Close = %v, want context.Canceled", err)
		}
		if rec.Body.Len() != 0 {
			t.Errorf("wrote %q to a gone client", rec.Body.String())
		}
	})

	t.Run("ErrClosed", func(t *testing.T) {
		rec := httptest.NewRecorder()
		w := sse.NewWriter(rec, httptest.NewRequest("GET", "/", nil), sse.Coachd, -1)
		if err := w.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if err := w.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		if err := w.Send(text("late")); !errors.Is(err, sse.ErrClosed) {
			t.Errorf("Send after Close = %v, want ErrClosed", err)
		}
		// An empty stream is still a well-formed event stream.
		if got := rec.Header().Get("Content-Type"); got != "text/event-stream" {
			t.Errorf("Content-Type = %q", got)
		}
		if rec.Code != http.StatusOK || rec.Body.Len() != 0 {
			t.Errorf("got %d %q, want 200 and no body", rec.Code, rec.Body.String())
		}
	})

	t.Run("UnknownDialect", func(t *testing.T) {
		rec := httptest.NewRecorder()
		w := sse.NewWriter(rec, httptest.NewRequest("GET", "/", nil), "bogus", -1)
		if got := w.Dialect(); got != sse.Coachd {
			t.Errorf("Dialect = %q, want coachd", got)
		}
		w.Close()
	})
}

// TestWriterConcurrent sends from many goroutines at once: every frame
// must arrive whole, and each goroutine's frames in its own order.
func TestWriterConcurrent(t *testing.T) {
	const senders, each = 8, 50
	rec := httptest.NewRecorder()
	w := sse.NewWriter(rec, httptest.NewRequest("GET", "/", nil), sse.Coachd, time.Millisecond)
	var wg sync.WaitGroup
	for g := range senders {
		wg.Go(func() {
			for i := range each {
				if err := w.Send(text(fmt.Sprintf("%d:%d", g, i))); err != nil {
					t.Errorf("Send: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !rec.Flushed {
		t.Error("never flushed")
	}
	next := make([]int, senders)
	frames := strings.Split(strings.TrimSuffix(rec.Body.String(), "\n\n"), "\n\n")
	n := 0
	for _, f := range frames {
		if f == ": ping" {
			continue
		}
		var g, i int
		if _, err := fmt.Sscanf(f, "event: content_delta\ndata: {\"text\":\"%d:%d\"}", &g, &i); err != nil {
			t.Fatalf("bad frame %q: %v", f, err)
		}
		if i != next[g] {
			t.Fatalf("sender %d: got frame %d, want %d", g, i, next[g])
		}
		next[g]++
		n++
	}
	if n != senders*each {
		t.Errorf("got %d frames, want %d", n, senders*each)
	}
}

// flushCounter is a ResponseWriter that counts writes and flushes.
type flushCounter struct {
	*httptest.ResponseRecorder
	writes, flushes int
}

func (f *flushCounter) Write(p []byte) (int, error) { f.writes++; return f.ResponseRecorder.Write(p) }
func (f *flushCounter) Flush()                      { f.flushes++; f.ResponseRecorder.Flush() }

// Queued events go out together at Flush, in order, each with its id;
// Send after queued events writes them first; Close writes what is queued.
func TestWriterQueue(t *testing.T) {
	rec := &flushCounter{ResponseRecorder: httptest.NewRecorder()}
	w := sse.NewWriter(rec, httptest.NewRequest("GET", "/", nil), sse.Coachd, -1)
	for i, s := range []string{"a", "b", "c"} {
		ev := text(s)
		ev.Turn, ev.Seq = 1, int64(i+1)
		if err := w.Queue(ev); err != nil {
			t.Fatal(err)
		}
	}
	if rec.Body.Len() != 0 || rec.writes != 0 {
		t.Fatalf("Queue wrote %q before Flush", rec.Body.String())
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if rec.writes != 1 || rec.flushes != 1 {
		t.Errorf("three queued events took %d writes and %d flushes, want 1 and 1", rec.writes, rec.flushes)
	}
	want := "id: 1:1\nevent: content_delta\ndata: {\"text\":\"a\"}\n\n" +
		"id: 1:2\nevent: content_delta\ndata: {\"text\":\"b\"}\n\n" +
		"id: 1:3\nevent: content_delta\ndata: {\"text\":\"c\"}\n\n"
	if got := rec.Body.String(); got != want {
		t.Fatalf("body:\n%s\nwant:\n%s", got, want)
	}
	if err := w.Flush(); err != nil || rec.writes != 1 {
		t.Errorf("an empty Flush wrote (%d writes, %v)", rec.writes, err)
	}
	rec.Body.Reset()
	w.Queue(text("d"))
	if err := w.Send(text("e")); err != nil {
		t.Fatal(err)
	}
	if got := rec.Body.String(); !strings.Contains(got, `"d"`) || strings.Index(got, `"d"`) > strings.Index(got, `"e"`) {
		t.Errorf("Send after a queued event wrote %q: want d then e", got)
	}
	rec.Body.Reset()
	w.Queue(text("f"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rec.Body.String(), `"f"`) {
		t.Errorf("Close dropped the queued event: %q", rec.Body.String())
	}
}

// deadlineRecorder is a flushCounter whose connection deadline can be set.
type deadlineRecorder struct {
	flushCounter
	deadline time.Time
}

func (d *deadlineRecorder) SetWriteDeadline(t time.Time) error { d.deadline = t; return nil }

// End writes what is queued and the closing bytes without flushing them
// (the server sends them with the response's end) and bounds that last
// write with the write timeout; Close flushes and sets no deadline.
func TestWriterEnd(t *testing.T) {
	for _, end := range []bool{true, false} {
		rec := &deadlineRecorder{flushCounter: flushCounter{ResponseRecorder: httptest.NewRecorder()}}
		w := sse.NewWriter(rec, httptest.NewRequest("GET", "/", nil), sse.Sage, -1)
		w.SetWriteTimeout(time.Minute)
		if err := w.Send(text("a")); err != nil {
			t.Fatal(err)
		}
		w.Queue(text("b"))
		w.Queue(coachd.Event{Type: coachd.EventTurnEnded, StopReason: "end_turn", Turn: 1, Seq: 3})
		before := time.Now()
		var err error
		if end {
			err = w.End()
		} else {
			err = w.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
		body := rec.Body.String()
		if !strings.Contains(body, `"b"`) || !strings.HasSuffix(body, "data: [DONE]\n\n") {
			t.Errorf("end %v: body %q, want the queued events and the closing bytes", end, body)
		}
		switch {
		case end && rec.flushes != 1:
			t.Errorf("End flushed: %d flushes, want only Send's", rec.flushes)
		case end && (rec.deadline.Before(before.Add(time.Minute)) || rec.deadline.After(time.Now().Add(time.Minute))):
			t.Errorf("End's write deadline %v, want the write timeout from now", rec.deadline)
		case !end && (rec.flushes < 2 || !rec.deadline.IsZero()):
			t.Errorf("Close: %d flushes, deadline %v; want its writes flushed and no deadline left", rec.flushes, rec.deadline)
		}
	}
}

// Abandon gives an untouched response back to the handler (nothing sent,
// not even the headers, and Close after it sends nothing); once anything
// went out it does nothing.
func TestWriterAbandon(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		rec := httptest.NewRecorder()
		w := sse.NewWriter(rec, httptest.NewRequest("GET", "/", nil), sse.Coachd, time.Hour)
		if !w.Abandon() {
			t.Fatal("Abandon of an untouched writer: false")
		}
		w.Close()
		if rec.Code != 200 || rec.Header().Get("Content-Type") != "" || rec.Body.Len() != 0 || rec.Flushed {
			t.Errorf("the response was touched: %d %v %q", rec.Code, rec.Header(), rec.Body)
		}
		if err := w.SendData(map[string]int{"a": 1}); err != sse.ErrClosed {
			t.Errorf("SendData after Abandon: %v", err)
		}
	})
	t.Run("ErrStarted", func(t *testing.T) {
		rec := httptest.NewRecorder()
		w := sse.NewWriter(rec, httptest.NewRequest("GET", "/", nil), sse.Coachd, -1)
		w.SendData(map[string]int{"a": 1})
		if w.Abandon() {
			t.Error("Abandon after a write: true")
		}
		if err := w.SendData(map[string]int{"b": 2}); err != nil || !strings.Contains(rec.Body.String(), `"b"`) {
			t.Errorf("the stream did not go on: %v %q", err, rec.Body)
		}
		w.Close()
	})
}

package sse_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sse"
)

// lockedRecorder is a ResponseWriter whose body is read while the
// heartbeat writes to it.
type lockedRecorder struct {
	mu    sync.Mutex
	body  strings.Builder
	wrote chan struct{} // gets a value per write
}

func (r *lockedRecorder) Header() http.Header { return http.Header{} }
func (r *lockedRecorder) WriteHeader(int)     {}
func (r *lockedRecorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.body.WriteString(string(p))
	select {
	case r.wrote <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (r *lockedRecorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.body.String()
}

// TestWriterDetach: a detached writer goes on on its new ResponseWriter
// (event ids, heartbeats, the dialect's closing bytes), lives by its new
// context, and leaves the old one alone; a failed Detach changes nothing.
func TestWriterDetach(t *testing.T) {
	old := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	w := sse.NewWriter(old, r, sse.Sage, 20*time.Millisecond)
	if err := w.Send(coachd.Event{Type: coachd.EventTextDelta, Turn: 1, Seq: 1, Text: "a"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Detach(context.Background(), func() (http.ResponseWriter, error) { return nil, errors.New("no") }); err == nil {
		t.Fatal("a failed Detach reported no error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	to := &lockedRecorder{wrote: make(chan struct{}, 1)}
	if err := w.Detach(ctx, func() (http.ResponseWriter, error) { return to, nil }); err != nil {
		t.Fatal(err)
	}
	before := old.Body.String()
	if err := w.Send(coachd.Event{Type: coachd.EventTextDelta, Turn: 1, Seq: 2, Text: "b"}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(wait)
	for !strings.Contains(to.String(), ": ping") {
		select {
		case <-to.wrote:
		case <-deadline:
			t.Fatalf("no heartbeat on the new writer: %q", to.String())
		}
	}
	cancel() // the new context ends the stream, not the request's
	if err := w.Send(text("c")); err == nil {
		t.Error("Send after the new context ended")
	}
	w.Close()
	got := to.String()
	if !strings.HasPrefix(got, "id: 1:2\ndata: {\"text\":\"b\"}\n\n") || strings.Contains(got, `"c"`) {
		t.Errorf("new writer got %q", got)
	}
	if old.Body.String() != before || !strings.Contains(before, `"a"`) {
		t.Errorf("old writer written after Detach: %q -> %q", before, old.Body.String())
	}
}

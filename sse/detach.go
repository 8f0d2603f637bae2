package sse

import (
	"context"
	"net/http"
)

// Detach moves an open stream onto another ResponseWriter that lives by
// ctx from then on: the server parks an idle stream's connection off its
// request (a hijacked HTTP/1.1 connection with the chunked framing written
// by hand) and the stream goes on as before, dialect state, event ids and
// heartbeats included. to is called with the writer locked, so no
// heartbeat writes to the old ResponseWriter while it is taken over; if
// it fails, the writer is unchanged and its error returned.
func (w *Writer) Detach(ctx context.Context, to func() (http.ResponseWriter, error)) error {
	if w.heartbeat > 0 {
		leave(w) // the heart reads ctx unlocked: not while it changes
	}
	w.mu.Lock()
	rw, err := to()
	if err == nil {
		w.w, w.rc, w.ctx = rw, http.NewResponseController(rw), ctx
	}
	closed := w.closed
	w.mu.Unlock()
	if w.heartbeat > 0 && !closed {
		join(w)
	}
	return err
}

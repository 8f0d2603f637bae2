package sse

import (
	"sync"
	"time"
)

// One goroutine per heartbeat interval serves every Writer of that
// interval: idle streams cost no goroutine and no timer of their own
// (issue 18: 10,000 idle streams on one process). It ticks four times an
// interval, so a stream idle for a whole interval gets its ping within a
// quarter interval more, and stops when its last Writer closes.
//
// The registry is process-wide like net/http's buffer pools: runtime
// machinery with no configuration in it, not application state.
var hearts = struct {
	sync.Mutex
	m map[time.Duration]*heart
}{m: map[time.Duration]*heart{}}

type heart struct {
	every   time.Duration
	writers map[*Writer]struct{}
}

// join adds w to its interval's heart, starting the heart if needed.
func join(w *Writer) {
	hearts.Lock()
	defer hearts.Unlock()
	h := hearts.m[w.heartbeat]
	if h == nil {
		h = &heart{every: w.heartbeat, writers: map[*Writer]struct{}{}}
		hearts.m[w.heartbeat] = h
		go h.run()
	}
	h.writers[w] = struct{}{}
}

// leave removes w; the heart stops at its next tick once it has none.
func leave(w *Writer) {
	hearts.Lock()
	defer hearts.Unlock()
	if h := hearts.m[w.heartbeat]; h != nil {
		delete(h.writers, w)
	}
}

func (h *heart) run() {
	t := time.NewTicker(max(h.every/4, time.Millisecond))
	defer t.Stop()
	var due []*Writer
	for now := range t.C {
		due = due[:0]
		hearts.Lock()
		if len(h.writers) == 0 {
			delete(hearts.m, h.every)
			hearts.Unlock()
			return
		}
		for w := range h.writers {
			if w.ctx.Err() != nil {
				delete(h.writers, w) // the client left; Close may never come
				continue
			}
			if w.idleSince(now) >= h.every {
				due = append(due, w)
			}
		}
		hearts.Unlock()
		// A ping may block up to the write timeout on a client that does
		// not read: each goes out on its own short-lived goroutine so one
		// stuck stream cannot delay the others' heartbeats.
		for _, w := range due {
			go w.ping()
		}
	}
}

// idleSince is how long before now the stream last wrote; a writer busy
// writing (its lock held) counts as not idle.
func (w *Writer) idleSince(now time.Time) time.Duration {
	if !w.mu.TryLock() {
		return 0
	}
	defer w.mu.Unlock()
	if w.closed || w.err != nil {
		return 0
	}
	return now.Sub(w.last)
}

// ping writes a heartbeat if the stream is still open and idle for a whole
// interval. A failed write (the client is gone) leaves the error sticky
// for the stream's next Send.
func (w *Writer) ping() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.err != nil || time.Since(w.last) < w.heartbeat {
		return
	}
	_ = w.write(ping)
}

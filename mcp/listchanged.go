package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"
)

// A server announces a change of its tools with
// notifications/tools/list_changed: over stdio on its output, over
// streamable HTTP on the event stream the client opens with a GET (or,
// from protocol 2026-07-28, subscriptions/listen). The change expires
// the listed tools: the next turn lists them again.

// toolsChanged expires the listed tools, and any listing under way
// (its answer may predate the change). Logged once a listing, however
// many notifications a server sends.
func (s *Server) toolsChanged() {
	s.mu.Lock()
	first := s.changes == s.listGen
	s.changes++
	s.listedAt = time.Time{}
	s.mu.Unlock()
	if first {
		s.log.Debug("mcp server's tool list changed")
	}
}

// streamWait bounds the wait for the answer to the GET that opens an
// HTTP server's event stream: the SDK waits for it while it connects,
// and without a bound a server (or a buffering proxy) that never answers
// it stalled the start for good. Past it the server is taken as one
// without the stream: its changes show when its tools are listed again.
const streamWait = 5 * time.Second

// errStreamWait is why a GET was given up.
var errStreamWait = errors.New("the event stream did not open in time")

// streamTransport bounds the wait for a GET's answer (the event
// stream's headers), not the stream itself, and for the answer to a POST
// sent without a deadline.
type streamTransport struct {
	next    http.RoundTripper
	wait    time.Duration
	log     *slog.Logger
	opened  func()  // called when a GET's event stream opens
	backoff Backoff // between event streams that end without an event (resumeBody)
}

func (t streamTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodGet {
		if _, ok := r.Context().Deadline(); ok || r.Method != http.MethodPost {
			return t.next.RoundTrip(r)
		}
		// The SDK posts its answer to a server's request (a ping on the
		// event stream) with a context that never ends, and closes only
		// once it is done: a server that hung without answering that
		// POST held the goroutine, and Close (a pack's reload, coachd's
		// shutdown), for good. Past the wait the answer is given up (the
		// SDK reads a failed POST as one that never left).
		resp, late, err := t.bounded(r)
		if late {
			return nil, fmt.Errorf("the MCP server did not answer within %s", t.wait)
		}
		return resp, err
	}
	resp, err := t.open(r)
	if err == nil && eventStream(resp) {
		resp.Body = &resumeBody{t: t, req: r, body: resp.Body, since: time.Now()}
	}
	return resp, err
}

// open sends the GET that opens the event stream, its answer's wait
// bounded.
func (t streamTransport) open(r *http.Request) (*http.Response, error) {
	resp, late, err := t.bounded(r)
	if late {
		// The SDK reads 405 as "no event stream here", and goes on.
		t.log.Warn("mcp server's event stream did not open; its tool list changes show when its tools are listed again",
			"waited", t.wait)
		return &http.Response{Status: "405 Method Not Allowed", StatusCode: http.StatusMethodNotAllowed,
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	}
	if err == nil && t.opened != nil && eventStream(resp) {
		t.opened()
	}
	return resp, err
}

// bounded sends r, its answer's headers awaited at most t.wait (late:
// they were not), not its body.
func (t streamTransport) bounded(r *http.Request) (resp *http.Response, late bool, err error) {
	ctx, cancel := context.WithCancelCause(r.Context())
	timer := time.AfterFunc(t.wait, func() { cancel(errStreamWait) })
	resp, err = t.next.RoundTrip(r.WithContext(ctx))
	timer.Stop()
	if err != nil {
		late = errors.Is(context.Cause(ctx), errStreamWait) && r.Context().Err() == nil
		cancel(nil)
		return nil, late, err
	}
	resp.Body = cancelBody{ReadCloser: resp.Body, cancel: cancel}
	return resp, false, nil
}

// cancelBody ends its request's context when closed.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelCauseFunc
}

func (b cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel(nil)
	return err
}

// streamOpened counts the event streams a connection opened: one opened
// again may have missed a change (the server keeps no events for a
// stream that is down), so it stands for one.
func (s *Server) streamOpened() {
	s.mu.Lock()
	s.streams++
	again := s.streams > 1
	if again {
		s.changes++
		s.listedAt = time.Time{}
	}
	s.mu.Unlock()
	if again {
		s.log.Debug("mcp server's event stream opened again; its tools are listed again")
	}
}

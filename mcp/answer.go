package mcp

import (
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// answerTransport bounds, for one connection to an HTTP server, the
// answers to the server's own requests (ping, roots/list…) that coachd
// is posting and the server has not taken: the SDK posts each from a
// goroutine of its own, which waits for the server's reply up to
// streamWait. A server whose event stream sent requests without end and
// took none of the answers grew coachd by thousands of goroutines and
// connections a second (25,000 goroutines and 250 MB within 20 s),
// for as long as it ran. Past maxAnswering it is stopped, as a stdio
// server is (groupConn): cut is told why, and the answers under way end.
// The SDK's connection cannot be wrapped (its session updates go
// through an unexported method), so its HTTP client is.
type answerTransport struct {
	next      http.RoundTripper
	cut       func(error)
	answering atomic.Int64
	once      sync.Once
	stopped   context.Context // ended when the server is stopped
	stop      context.CancelFunc
}

func newAnswerTransport(next http.RoundTripper, cut func(error)) *answerTransport {
	t := &answerTransport{next: next, cut: cut}
	t.stopped, t.stop = context.WithCancel(context.Background())
	return t
}

func (t *answerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if !answerPost(r) {
		return t.next.RoundTrip(r)
	}
	defer t.answering.Add(-1)
	if t.answering.Add(1) > maxAnswering || t.stopped.Err() != nil {
		t.once.Do(func() {
			t.cut(errNotAnswered)
			t.stop()
		})
		return nil, errNotAnswered
	}
	ctx, cancel := context.WithCancelCause(r.Context())
	defer context.AfterFunc(t.stopped, func() { cancel(errNotAnswered) })()
	resp, err := t.next.RoundTrip(r.WithContext(ctx))
	if err != nil {
		cancel(nil)
		return nil, err
	}
	resp.Body = cancelBody{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// answerPost reports whether r posts an answer to the server's request:
// the SDK sends its own requests with a deadline, and an answer without.
func answerPost(r *http.Request) bool {
	if r.Method != http.MethodPost || r.GetBody == nil {
		return false
	}
	if _, ok := r.Context().Deadline(); ok {
		return false
	}
	body, err := r.GetBody()
	if err != nil {
		return false
	}
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, 1<<20))
	if err != nil {
		return false
	}
	msg, err := jsonrpc.DecodeMessage(data)
	_, ok := msg.(*jsonrpc.Response)
	return err == nil && ok
}

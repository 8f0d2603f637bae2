// What every model adapter reads the same way from its upstream.

package coachd

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"time"
)

// TransportError maps a failure to reach or read a model's upstream (not
// an answer it gave): a *Error passes through; a deadline or a network
// timeout is ETIMEOUT; a cancelled call is EAPI "canceled" whose cause
// says so for errors.Is; anything else EAPI "failed". The cause stays in
// Err. Every model adapter classifies alike, so retries and the fallback
// model treat providers the same.
func TransportError(ctx context.Context, err error) error {
	var ce *Error
	switch {
	case errors.As(err, &ce):
		return err
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Code: ETIMEOUT, Message: "model request timed out", Err: err}
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		// The caller gave up (client disconnect, shutdown): not an
		// upstream failure.
		cause := ctx.Err()
		if cause == nil {
			cause = err
		}
		return &Error{Code: EAPI, Message: "model request canceled", Err: errors.Join(cause, err)}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &Error{Code: ETIMEOUT, Message: "model request timed out", Err: err}
	}
	return &Error{Code: EAPI, Message: "model request failed", Err: err}
}

// RetryAfter reads how long an upstream asks to wait from its answer's
// headers: retry-after-ms, or retry-after in seconds or as an HTTP date.
// 0 when there is none (or a nil header).
func RetryAfter(h http.Header) time.Duration {
	if h == nil {
		return 0
	}
	if v := h.Get("retry-after-ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("retry-after")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

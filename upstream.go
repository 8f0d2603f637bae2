// What every model adapter reads the same way from its upstream.

package coachd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/coachd/coachd/internal/envsecret"
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

// NoRedirects is c (a new client when nil) refusing every redirect, for
// the clients that carry a provider's credentials: net/http drops only
// Authorization on a redirect to another host, not x-api-key or
// X-Amz-Security-Token, and Vertex's transport adds its token to every
// request it sends. No provider redirects its API calls; a redirect is
// an error that says so, and the log where it pointed. A client with its
// own CheckRedirect is kept as it is.
func NoRedirects(c *http.Client) *http.Client {
	if c == nil {
		return &http.Client{CheckRedirect: refuseRedirect}
	}
	if c.CheckRedirect != nil {
		return c
	}
	cp := *c
	cp.CheckRedirect = refuseRedirect
	return &cp
}

func refuseRedirect(req *http.Request, _ []*http.Request) error {
	return &Error{Code: EAPI, Message: "the provider answered with a redirect, which coachd does not follow (check its base URL)",
		Err: fmt.Errorf("redirect to %s://%s refused", req.URL.Scheme, req.URL.Host)}
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

// Bounds of the text an upstream (a model API, a tool server, a voice or
// data provider) chooses that coachd passes on: an error's kind reaches
// the client's error message, its message and body only the log.
const (
	MaxUpstreamKind = 100
	MaxUpstreamText = 500
)

// UpstreamText is s, text an upstream chose, fit for a client's error body
// or a log line: invalid UTF-8 and control and format characters (a line
// break that starts a forged log line, a terminal escape, a bidi override)
// become spaces, and it is cut on a rune boundary to at most max bytes,
// "…" marking the cut. The start is kept: it says what failed.
func UpstreamText(s string, max int) string {
	if len(s) <= max && utf8.ValidString(s) && !strings.ContainsFunc(s, unsafeRune) {
		return s
	}
	const cut = "…"
	if max < len(cut) {
		return ""
	}
	var sb strings.Builder
	sb.Grow(min(len(s), max+utf8.UTFMax))
	for i, r := range s {
		if sb.Len() > max {
			break // enough to know it is cut
		}
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				r = ' ' // a byte that is not UTF-8
			}
		}
		if unsafeRune(r) {
			r = ' '
		}
		sb.WriteRune(r)
	}
	out := sb.String()
	if len(out) <= max {
		return out
	}
	n := max - len(cut)
	for n > 0 && !utf8.RuneStart(out[n]) {
		n--
	}
	return out[:n] + cut
}

// unsafeRune: a control or format character (C0, DEL, C1, bidi controls,
// zero-width characters) or a line or paragraph separator.
func unsafeRune(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
}

// Redacted is s with each of secrets (an API key coachd sent) that it
// quotes read as [redacted]: a gateway may echo the key it was sent in
// its error. Redact before cutting, so no part of a key is left. A
// secret shorter than envsecret.MinLen is not looked for: it would mask
// ordinary words, and no provider issues one. A secret with a "/" (AWS
// session tokens, base64 keys) is also looked for as JSON written by PHP
// spells it, "\/" for "/", as envsecret.Hide does.
func Redacted(s string, secrets ...string) string {
	for _, k := range secrets {
		if len(k) < envsecret.MinLen {
			continue
		}
		spellings := []string{k}
		if strings.Contains(k, "/") {
			spellings = append(spellings, strings.ReplaceAll(k, "/", `\/`))
		}
		for _, v := range spellings {
			if strings.Contains(s, v) {
				s = strings.ReplaceAll(s, v, envsecret.Mark)
			}
		}
	}
	return s
}

// Masked is err with its text read as msg (redacted, bounded): the log
// sees msg, and errors.Is and errors.As still see err.
func Masked(err error, msg string) error { return maskedError{msg, err} }

type maskedError struct {
	msg string
	err error
}

func (e maskedError) Error() string { return e.msg }
func (e maskedError) Unwrap() error { return e.err }

// Package redirecttest is two loopback servers for tests of the clients
// that carry a provider's credentials: one answers every request with a
// 307 to the other, which is addressed by another host name (localhost,
// where the first is 127.0.0.1) and records every request it gets.
package redirecttest

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/coachd/coachd"
)

// Pair is the redirecting server (URL) and what the other one saw.
type Pair struct {
	URL    string // the redirecting server, as a base URL
	Target string // where it redirects: the other server, by another host name
	mu     sync.Mutex
	got    []http.Header
}

// New starts both servers; they close when tb ends.
func New(tb testing.TB) *Pair {
	tb.Helper()
	p := &Pair{}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.got = append(p.got, r.Header.Clone())
		p.mu.Unlock()
		w.WriteHeader(http.StatusNotFound)
	}))
	tb.Cleanup(other.Close)
	p.Target = strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	from := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// 307 keeps the method and the body, as 308 does.
		http.Redirect(w, r, p.Target+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	tb.Cleanup(from.Close)
	p.URL = from.URL
	return p
}

// Got is the headers of each request the other server received.
func (p *Pair) Got() []http.Header {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]http.Header(nil), p.got...)
}

// CheckRefused fails tb unless the call that met the redirect was
// refused as it must be: the other server got nothing, and err is an
// EAPI coachd error that names the redirect, whose text (what the log
// shows) says where it pointed.
func (p *Pair) CheckRefused(tb testing.TB, err error) {
	tb.Helper()
	if got := p.Got(); len(got) > 0 {
		tb.Fatalf("the redirect was followed: the other host got %d requests, headers %v", len(got), got[0])
	}
	var ce *coachd.Error
	if !errors.As(err, &ce) || ce.Code != coachd.EAPI || !strings.Contains(ce.Message, "redirect") {
		tb.Fatalf("err = %v, want an %s error that names the redirect", err, coachd.EAPI)
	}
	if !strings.Contains(err.Error(), "localhost") {
		tb.Errorf("log text %q does not say where the redirect pointed", err.Error())
	}
}

// Package redirecttest is two loopback servers for tests of the clients
// that carry a provider's credentials: one answers every request with a
// 307 to the other, which is addressed by another host name (localhost,
// where the first is 127.0.0.1) and records every request it gets.
package redirecttest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
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

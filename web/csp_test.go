package web

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// With a voice provider the page may call its origin, and nothing else.
func TestCSPConnect(t *testing.T) {
	for _, tc := range []struct {
		connect []string
		want    string
	}{
		{nil, "connect-src 'self';"},
		{[]string{""}, "connect-src 'self';"},
		{[]string{"https://api.openai.com"}, "connect-src 'self' https://api.openai.com;"},
		{[]string{"https://x.example 'unsafe-inline'"}, "connect-src 'self';"},
	} {
		rec := httptest.NewRecorder()
		Handler(tc.connect...).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		if got := rec.Header().Get("Content-Security-Policy"); !strings.Contains(got, tc.want) || strings.Contains(got, "unsafe") {
			t.Errorf("%q: CSP %q, want %q", tc.connect, got, tc.want)
		}
	}
}

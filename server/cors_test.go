package server_test

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/server"
)

// TestCORS: an allow-listed origin gets its preflight answered and can
// read responses; any other origin gets no CORS headers.
func TestCORS(t *testing.T) {
	db := mustDB(t, filepath.Join(t.TempDir(), "c.db"), nil)
	srv := httptest.NewServer(server.New(server.Deps{Store: db, CORSOrigins: []string{"https://app.example.com"}}))
	defer srv.Close()
	do := func(method, origin string, hdr map[string]string) *http.Response {
		req, _ := http.NewRequest(method, srv.URL+"/v1/chat/stream", nil)
		req.Header.Set("Origin", origin)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	pre := map[string]string{"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type"}
	r := do("OPTIONS", "https://app.example.com", pre)
	if r.StatusCode != 204 || r.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
		r.Header.Get("Access-Control-Allow-Headers") == "" || r.Header.Get("Access-Control-Allow-Methods") == "" {
		t.Fatalf("preflight: %d %v", r.StatusCode, r.Header)
	}
	// The session header the README tells clients to send, and what the
	// openai SDK sends from a browser (X-Stainless-*), pass a preflight;
	// a list that is not header names gets only coachd's own.
	for asked, want := range map[string][]string{
		"x-coachd-session-id": {"X-Coachd-Session-Id"},
		"authorization, x-stainless-os, x-stainless-retry-count": {"x-stainless-os", "x-stainless-retry-count", "Authorization"},
		"authorization, bad header, x(y)":                        {"Authorization"},
	} {
		h := do("OPTIONS", "https://app.example.com", map[string]string{"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": asked}).Header.Get("Access-Control-Allow-Headers")
		for _, w := range want {
			if !strings.Contains(h, w) {
				t.Errorf("preflight asking %q: Allow-Headers %q lacks %s", asked, h, w)
			}
		}
		if strings.Contains(h, "bad") {
			t.Errorf("preflight asking %q: Allow-Headers %q", asked, h)
		}
	}
	if r := do("OPTIONS", "https://evil.example", pre); r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("a foreign origin was allowed: %v", r.Header)
	}
	r = do("POST", "https://app.example.com", nil)
	if r.StatusCode != 401 || r.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" || r.Header.Get("Access-Control-Expose-Headers") == "" {
		t.Fatalf("request: %d %v", r.StatusCode, r.Header)
	}
	// A stream's headers a client needs to resume it (the session, the
	// turn a stream cut before its first event resumes from, and that a
	// resume missed events the log no longer has), and that a message
	// sent again with its Idempotency-Key got its first turn's events.
	for _, h := range []string{"X-Coachd-Session-Id", "X-Coachd-Turn", "X-Coachd-Events-Missed", "Idempotent-Replayed"} {
		if !strings.Contains(r.Header.Get("Access-Control-Expose-Headers"), h) {
			t.Errorf("Expose-Headers %q lacks %s", r.Header.Get("Access-Control-Expose-Headers"), h)
		}
	}
}

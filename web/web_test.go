package web

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, method, path string) *http.Response {
	t.Helper()
	rec := httptest.NewRecorder()
	Handler().ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec.Result()
}

func TestHandler(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		for path, want := range map[string]string{
			"/":                 "text/html; charset=utf-8",
			"/assets/app.js":    "text/javascript; charset=utf-8",
			"/assets/stream.js": "text/javascript; charset=utf-8",
			"/assets/style.css": "text/css; charset=utf-8",
			"/assets/icon.svg":  "image/svg+xml",
		} {
			res := get(t, http.MethodGet, path)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("GET %s: status %d, want 200", path, res.StatusCode)
			}
			if got := res.Header.Get("Content-Type"); got != want {
				t.Errorf("GET %s: Content-Type %q, want %q", path, got, want)
			}
			if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
				t.Errorf("GET %s: Content-Security-Policy %q lacks script-src 'self'", path, csp)
			}
			if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("GET %s: X-Content-Type-Options %q, want nosniff", path, got)
			}
		}
	})
	t.Run("Index", func(t *testing.T) {
		body, _ := io.ReadAll(get(t, http.MethodGet, "/").Body)
		for _, want := range []string{`src="/assets/app.js"`, `href="/assets/style.css"`, `id="composer"`} {
			if !strings.Contains(string(body), want) {
				t.Errorf("index.html lacks %s", want)
			}
		}
	})
	t.Run("Head", func(t *testing.T) {
		if res := get(t, http.MethodHead, "/assets/app.js"); res.StatusCode != http.StatusOK {
			t.Errorf("HEAD: status %d, want 200", res.StatusCode)
		}
	})
	// Cache-Control: no-cache asks the browser to revalidate every file
	// on every load: without a validator that is a full download of
	// every file, every time.
	t.Run("Revalidate", func(t *testing.T) {
		seen := map[string]string{}
		for _, path := range []string{"/", "/assets/app.js", "/assets/style.css"} {
			res := get(t, http.MethodGet, path)
			tag := res.Header.Get("ETag")
			if tag == "" {
				t.Errorf("GET %s: no ETag to revalidate with", path)
				continue
			}
			if other, ok := seen[tag]; ok {
				t.Errorf("GET %s: ETag %s, the same as %s's", path, tag, other)
			}
			seen[tag] = path
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodGet, path, nil)
			req.Header.Set("If-None-Match", tag)
			Handler().ServeHTTP(rec, req)
			if rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
				t.Errorf("GET %s If-None-Match %s: status %d with %d bytes, want 304 and none", path, tag, rec.Code, rec.Body.Len())
			}
			if csp := rec.Header().Get("Content-Security-Policy"); csp == "" {
				t.Errorf("GET %s 304: no Content-Security-Policy", path)
			}
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		for _, path := range []string{"/index.html", "/assets/", "/assets/nope.js", "/assets/../web.go", "/assets/index.html", "/v1/me", "/static/app.js"} {
			if res := get(t, http.MethodGet, path); res.StatusCode != http.StatusNotFound {
				t.Errorf("GET %s: status %d, want 404", path, res.StatusCode)
			}
		}
	})
	t.Run("ErrMethod", func(t *testing.T) {
		if res := get(t, http.MethodPost, "/"); res.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("POST /: status %d, want 405", res.StatusCode)
		}
	})
}

// TestNoHTMLSinks keeps model text out of the HTML parser: no asset may
// use an API that parses a string as HTML.
func TestNoHTMLSinks(t *testing.T) {
	sinks := regexp.MustCompile(`\.(innerHTML|outerHTML)\s*=|insertAdjacentHTML|document\.write|createContextualFragment|DOMParser|\beval\(|new Function\(`)
	err := fs.WalkDir(static, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(name, ".js") {
			return err
		}
		b, err := fs.ReadFile(static, name)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := sinks.FindString(line); m != "" {
				t.Errorf("%s:%d uses %s", name, i+1, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestAssetsLocal makes sure nothing is loaded from another origin: the
// UI must work offline.
func TestAssetsLocal(t *testing.T) {
	remote := regexp.MustCompile(`(src|href)="(https?:)?//|@import\s+url\(\s*["']?https?:|from\s+["']https?:`)
	err := fs.WalkDir(static, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(static, name)
		if err != nil {
			return err
		}
		if m := remote.Find(b); m != nil {
			t.Errorf("%s loads a remote resource: %s", name, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

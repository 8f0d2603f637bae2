// Package web is coachd's browser UI: plain HTML, CSS and JavaScript
// modules embedded in the binary. There is no build step and nothing is
// loaded from elsewhere, so the UI works offline.
package web

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed static
var files embed.FS

// static is the embedded directory, rooted at its files.
var static = func() fs.FS {
	sub, err := fs.Sub(files, "static")
	if err != nil {
		panic(err) // the embed pattern above guarantees the directory
	}
	return sub
}()

// etags are the embedded files' validators: a strong ETag from each
// file's bytes, so "no-cache" revalidates with a 304 instead of sending
// every file again on every load.
var etags = func() map[string]string {
	tags := map[string]string{}
	err := fs.WalkDir(static, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(static, name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		tags[name] = `"` + hex.EncodeToString(sum[:12]) + `"`
		return nil
	})
	if err != nil {
		panic(err) // the embedded files are in the binary
	}
	return tags
}()

// csp allows only the UI's own files and calls to its own origin (and
// data: and blob: images: attachment thumbnails are their own bytes). Model
// text is never parsed as HTML, and this is the second line of defence
// if that ever changes.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
	"connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Handler serves the UI: the app at "/" and its files at "/assets/…".
// Anything else is 404, so mount it only on those two patterns:
//
//	mux.Handle("GET /{$}", ui)
//	mux.Handle("GET /assets/", ui)
//
// connect lists the other origins the page may call (the voice
// provider's, for the realtime connection); empty ones are skipped.
func Handler(connect ...string) http.Handler {
	policy := cspFor(connect)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name, ok := fileFor(r.URL.Path)
		if !ok {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", policy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		// Revalidate every time: the files change with the binary; the
		// ETag makes that a 304 while they have not.
		h.Set("Cache-Control", "no-cache")
		h.Set("ETag", etags[name])
		if ct := contentType(name); ct != "" {
			h.Set("Content-Type", ct)
		}
		http.ServeFileFS(w, r, static, name)
	})
}

// cspFor is csp with connect-src widened to the given origins, and the
// remote audio of a realtime call allowed to play.
func cspFor(connect []string) string {
	var extra []string
	for _, o := range connect {
		if o != "" && !strings.ContainsAny(o, " ;,'\"") {
			extra = append(extra, o)
		}
	}
	if len(extra) == 0 {
		return csp
	}
	p := strings.Replace(csp, "connect-src 'self'", "connect-src 'self' "+strings.Join(extra, " "), 1)
	return p + "; media-src 'self' blob: mediastream:"
}

// fileFor maps a URL path to an embedded file name.
func fileFor(p string) (string, bool) {
	if p == "/" {
		return "index.html", true
	}
	rest, ok := strings.CutPrefix(p, "/assets/")
	if !ok || rest == "" || rest == "index.html" || strings.Contains(rest, "/") || strings.HasPrefix(rest, ".") {
		return "", false
	}
	if _, err := fs.Stat(static, rest); err != nil {
		return "", false
	}
	return rest, true
}

// contentType is set explicitly: a module script must be served as
// JavaScript, and the system's MIME table is not always there.
func contentType(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	}
	return ""
}

package server

import (
	"net/http"
	"slices"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// CORS: a browser app on another origin may call the API when its origin
// is allow-listed (Deps.CORSOrigins, --cors-origins). Requests carry their
// own bearer key, so no cookies are involved and credentials stay off.
const (
	corsMethods = "GET, POST, PUT, PATCH, DELETE, OPTIONS"
	corsHeaders = "Authorization, Content-Type, Accept, Idempotency-Key, Last-Event-ID, X-Coachd-Session-Id"
	corsExpose  = "X-Coachd-Session-Id, X-Coachd-Turn, X-Coachd-Events-Missed, Idempotent-Replayed, X-Request-Id, Retry-After"
)

// withCORS answers preflights for allowed origins and marks their
// responses readable; other origins get no CORS headers (the browser
// refuses them), and same-origin requests are untouched.
func (s *Server) withCORS(h http.Handler) http.Handler {
	if len(s.corsOrigins) == 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" || !s.corsAllowed(origin) {
			h.ServeHTTP(w, r)
			return
		}
		hd := w.Header()
		hd.Add("Vary", "Origin")
		hd.Set("Access-Control-Allow-Origin", origin)
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			hd.Add("Vary", "Access-Control-Request-Method, Access-Control-Request-Headers")
			hd.Set("Access-Control-Allow-Methods", corsMethods)
			hd.Set("Access-Control-Allow-Headers", corsAllowHeaders(r.Header.Get("Access-Control-Request-Headers")))
			hd.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		hd.Set("Access-Control-Expose-Headers", corsExpose)
		h.ServeHTTP(w, r)
	})
}

// corsAllowHeaders is corsHeaders and the headers a preflight asks for
// beyond them (the openai SDK's X-Stainless-*, an SDK's own): the origin
// is one the operator trusts, and the key, not a cookie, authorises. A
// request that names anything but header names gets corsHeaders alone.
func corsAllowHeaders(requested string) string {
	if strings.TrimSpace(requested) == "" || len(requested) > 2048 {
		return corsHeaders
	}
	for name := range strings.SplitSeq(requested, ",") {
		if !httpguts.ValidHeaderFieldName(strings.TrimSpace(name)) {
			return corsHeaders
		}
	}
	return corsHeaders + ", " + requested
}

func (s *Server) corsAllowed(origin string) bool {
	return slices.Contains(s.corsOrigins, "*") || slices.ContainsFunc(s.corsOrigins, func(o string) bool { return strings.EqualFold(o, origin) })
}

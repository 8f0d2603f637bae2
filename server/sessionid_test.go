package server_test

import (
	"net/http"
	"testing"
)

// TestMalformedSessionIDNotFound proves that a session id that could not
// exist (NUL, invalid UTF-8) in the path of stop, stream-token and the
// stream, or in X-Coachd-Session-Id on the OpenAI chat, is the uniform 404
// and never reaches SQL, where PostgreSQL would refuse it as a 500. The
// stream answers so before any credential is checked, its token included.
func TestMalformedSessionIDNotFound(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		e := mustChatEnvOn(t, dsn)
		k := e.alice.key
		for _, req := range []request{
			{method: "POST", path: "/v1/sessions/%00/stop", key: k},
			{method: "POST", path: "/v1/sessions/%FF/stop", key: k},
			{method: "POST", path: "/v1/sessions/%00/stream-token", key: k},
			{method: "POST", path: "/v1/sessions/%FF/stream-token", key: k},
			{method: "GET", path: "/v1/sessions/%00/stream", key: k, header: map[string]string{"Accept": "application/json"}},
			{method: "GET", path: "/v1/sessions/%FF/stream", key: k, header: map[string]string{"Accept": "application/json"}},
			{method: "GET", path: "/v1/sessions/%FF/stream?token=st_x", header: map[string]string{"Accept": "application/json"}},
			{method: "POST", path: "/v1/chat/completions", key: k, body: `{"model":"default","messages":[{"role":"user","content":"hi"}]}`,
				header: map[string]string{"X-Coachd-Session-Id": "sess_\xff"}},
		} {
			r := e.do(req)
			if r.status != http.StatusNotFound {
				t.Errorf("%s %s: %d %s, want 404", req.method, req.path, r.status, r.body)
			}
		}
	})
}

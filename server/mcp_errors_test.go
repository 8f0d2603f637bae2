package server_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd"
)

// TestMCPTransportErrorsJSON: what POST /v1/mcp refused before a JSON-RPC
// message was read (a wrong Content-Type or Accept, a body too large,
// empty, malformed or not a JSON-RPC message) was answered by the MCP
// SDK in plain text, not in the API's one error shape; its text named Go
// types. Each is now the JSON error with its code, and a detail where the
// body is at fault; a JSON-RPC message is still answered in JSON-RPC.
func TestMCPTransportErrorsJSON(t *testing.T) {
	e := mustChatEnvOn(t, filepath.Join(t.TempDir(), "coachd.db"))
	const both = "application/json, text/event-stream"
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	for _, tt := range []struct {
		name, ct, accept, body string
		status                 int
		code, detail           string // detail: the code of the one detail, "" for none
	}{
		{"TextPlain", "text/plain", both, ping, http.StatusUnsupportedMediaType, coachd.EUNSUPPORTED, ""},
		{"NoAccept", "application/json", "application/json", ping, http.StatusBadRequest, coachd.EINVALID, ""},
		{"TooLarge", "application/json", both, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 2<<20) + `"}}`, http.StatusRequestEntityTooLarge, coachd.ETOOLARGE, ""},
		{"Empty", "application/json", both, " ", http.StatusBadRequest, coachd.EINVALID, "required"},
		{"Truncated", "application/json", both, `{"jsonrpc":`, http.StatusBadRequest, coachd.EINVALID, "json"},
		{"EmptyBatch", "application/json", both, `[]`, http.StatusBadRequest, coachd.EINVALID, "json"},
		{"String", "application/json", both, `"x"`, http.StatusBadRequest, coachd.EINVALID, "json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do(request{method: "POST", path: "/v1/mcp", key: e.alice.key, body: tt.body,
				header: map[string]string{"Content-Type": tt.ct, "Accept": tt.accept}})
			if r.status != tt.status || r.errorCode() != tt.code || r.header.Get("Content-Type") != "application/json" {
				t.Fatalf("%d %s %.200s, want %d %s in the JSON error body", r.status, r.header.Get("Content-Type"), r.body, tt.status, tt.code)
			}
			if strings.Contains(string(r.body), "jsonrpc2.") || strings.Contains(string(r.body), "Go value") {
				t.Errorf("the error names Go types: %s", r.body)
			}
			var body struct {
				Error struct{ Details []coachd.FieldError }
			}
			mustUnmarshal(t, r.body, &body)
			if d := body.Error.Details; tt.detail == "" && len(d) != 0 || tt.detail != "" && (len(d) != 1 || d[0].Code != tt.detail) {
				t.Errorf("details %+v, want one with code %q", d, tt.detail)
			}
		})
	}
	t.Run("JSONRPC", func(t *testing.T) {
		r := e.do(request{method: "POST", path: "/v1/mcp", key: e.alice.key, body: ping, header: map[string]string{"Accept": both}})
		if r.status != http.StatusOK || !strings.Contains(string(r.body), `"jsonrpc":"2.0"`) {
			t.Fatalf("ping: %d %s", r.status, r.body)
		}
	})
}

package openai_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/coachd/coachd/modeltest"
	"github.com/coachd/coachd/openai"
	"github.com/coachd/coachd/openai/openaitest"
)

// hostileKind is an error type a provider (or a proxy in front of it)
// made long, multi-byte and full of control characters.
var hostileKind = "proxy_error\x1b[31m\nlevel=ERROR forged=1 " + strings.Repeat("é", 5000)

// checkBounded is modeltest.CheckBoundedError for an upstream's proxy_error.
func checkBounded(t *testing.T, err error, wantPrefix string) {
	t.Helper()
	modeltest.CheckBoundedError(t, err, wantPrefix+"proxy_error", "")
}

// TestSecurityUpstreamErrorTextBounded: the error type a provider puts in
// its body (64 KiB of it read) was echoed whole into the client's error
// message ("model rejected the request (<type>)") and the log; the
// message, cut at 500 bytes, could end mid-character and kept its
// control characters.
func TestSecurityUpstreamErrorTextBounded(t *testing.T) {
	t.Run("Status", func(t *testing.T) {
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"type": hostileKind,
			"message": "upstream said:\x00\r\n" + strings.Repeat("ü", 20000), "code": nil}})
		srv := MustServer(t)
		srv.Enqueue(openaitest.Status(http.StatusBadRequest, nil, string(b)))
		_, _, err := modeltest.Drain(newModel(srv, openai.Config{}).Stream(context.Background(), modeltest.Hello("")))
		checkBounded(t, err, "model rejected the request (")
		if !strings.Contains(err.Error(), "upstream said:") {
			t.Errorf("log text %.300q lost the upstream's message", err.Error())
		}
	})
	t.Run("ErrorEvent", func(t *testing.T) {
		srv := MustServer(t)
		srv.Enqueue(openaitest.Text("Hi there").ErrorAfter(1, hostileKind, nil))
		_, _, err := modeltest.Drain(newModel(srv, openai.Config{}).Stream(context.Background(), modeltest.Hello("")))
		checkBounded(t, err, "model stream failed (")
	})
}

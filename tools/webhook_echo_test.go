package tools_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/tools"
)

// TestSecurityWebhookEchoedSecret: an app that quotes the credential it
// was sent ("invalid token sk_live_…", a debug echo of the request) put
// the pack's ${ENV} header value into the tool result, which the model
// reads, the session stores and the user's stream shows. The README and
// SECURITY.md say such values never reach the model or a tool result.
func TestSecurityWebhookEchoedSecret(t *testing.T) {
	const key = "sk_live_9f8e7d6c5b4a"
	status := http.StatusUnauthorized
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, `{"error":"invalid token `+strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")+`","zone":"downtown"}`)
	}))
	defer app.Close()
	src := "name: lookup_zone\ndescription: Look up a zone.\nurl: ${APP}/zones\n" +
		"headers:\n  Authorization: Bearer ${ZONE_API_KEY}\n  X-Plan: ${PLAN:-basic}\n"
	vars := map[string]string{"APP": app.URL, "ZONE_API_KEY": key}
	w, err := tools.ParseWebhook("tools/lookup_zone.yaml", []byte(src), func(k string) string { return vars[k] }, loopback)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []int{http.StatusUnauthorized, http.StatusOK} {
		status = st
		res, err := w.Execute(context.Background(), coachd.ToolCall{ID: "toolu_1", Name: "lookup_zone", Input: []byte(`{"zone":"downtown"}`)}, env)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(res.Content, key) || strings.Contains(res.Content, "9f8e7d6c") {
			t.Errorf("HTTP %d: the header's secret is in the result: %q", st, res.Content)
		}
		if !strings.Contains(res.Content, "downtown") {
			t.Errorf("HTTP %d: the rest of the answer is gone: %q", st, res.Content)
		}
	}
}

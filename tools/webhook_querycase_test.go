package tools_test

import (
	"strings"
	"testing"
)

// TestSecurityWebhookQueryCollisionSpelled: apps read query names loosely
// (ASP.NET ignores case; PHP reads "api.key", "api key" and "api_key[]"
// as api_key, the last one winning), so GET input spelled so still
// collides with the URL's own parameter and is not sent.
func TestSecurityWebhookQueryCollisionSpelled(t *testing.T) {
	srv, got := queryServer(t)
	w := hook(t, srv.URL+"/q?api_key=${ZONE_KEY}", "method: GET\n")
	for _, in := range []string{`{"API_KEY":"attacker"}`, `{"Api_Key":"attacker"}`, `{"api.key":"attacker"}`,
		`{"api key":"attacker"}`, `{"api_key[]":"attacker"}`, `{"api_key[x]":"attacker"}`} {
		res := call(t, w, in)
		if !res.IsError || !strings.Contains(res.Content, "collides") || got.Load().(string) != "" {
			t.Errorf("%s: sent (%+v), server saw %q", in, res, got.Load())
		}
		got.Store("")
	}
	if res := call(t, w, `{"zone":"A","api":"x"}`); res.IsError || got.Load().(string) != "api_key=s3cret&api=x&zone=A" {
		t.Fatalf("plain GET: %+v, query %q", res, got.Load())
	}
}

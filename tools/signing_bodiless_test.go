package tools_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/tools"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// bodilessCall makes one signed call of a webhook tool with method and
// returns the request the app got.
func bodilessCall(t *testing.T, method, secret, input string) *http.Request {
	t.Helper()
	var mu sync.Mutex
	var got *http.Request
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = r.Clone(context.Background())
		mu.Unlock()
		io.WriteString(w, `{"ok":true}`)
	}))
	defer app.Close()
	src := "name: refund\ndescription: d\nmethod: " + method + "\nurl: ${APP}/refund?shop=7\n"
	w, err := tools.ParseWebhook("tools/refund.yaml", []byte(src), func(k string) string { return map[string]string{"APP": app.URL}[k] }, loopback)
	if err != nil {
		t.Fatal(err)
	}
	w.UseSecret(mustSecret(t, secret))
	res, err := w.Execute(context.Background(), coachd.ToolCall{ID: "toolu_1", Name: "refund", Input: []byte(input)},
		coachd.ToolEnv{User: &coachd.User{ID: "usr_alice"}, Session: &coachd.Session{ID: "sess_1"}})
	if err != nil || res.IsError {
		t.Fatalf("%+v %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	return got
}

// TestWebhookSignedGetCoversTheCall: a GET (or DELETE) call has no body,
// its input is the query: the signature must cover the input and the
// user (X-Coachd-User-Id), or a captured call verifies with another
// user or another query. A signature of the empty body covers neither.
func TestWebhookSignedGetCoversTheCall(t *testing.T) {
	secret := newSecret(t)
	got := bodilessCall(t, "GET", secret, `{"amount":"5"}`)
	h, query := got.Header.Clone(), got.URL.RawQuery
	if query != "shop=7&amount=5" || h.Get("webhook-signature") == "" {
		t.Fatalf("query %q headers %v", query, h)
	}
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	tampered := h.Clone()
	tampered.Set("X-Coachd-User-Id", "usr_mallory")
	if err := wh.Verify(nil, tampered); err == nil {
		t.Fatalf("a GET call with another user id (and any query, e.g. amount=5000 instead of %s) still verifies: the signature covers neither the input nor the user", query)
	}
}

// TestWebhookSignedBodilessPayload: the app verifies a GET or DELETE call
// with a Standard Webhooks library over the text the README gives, built
// from the request it got; a call with another method, path, query, user,
// session or tool_use_id does not verify.
func TestWebhookSignedBodilessPayload(t *testing.T) {
	secret := newSecret(t)
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	// The README's rule, as an app writes it.
	payload := func(method, target string, h http.Header) []byte {
		return []byte(method + " " + target + "\n" + h.Get("X-Coachd-User-Id") + "\n" +
			h.Get("X-Coachd-Session-Id") + "\n" + h.Get("X-Coachd-Tool-Use-Id"))
	}
	for _, method := range []string{"GET", "DELETE"} {
		t.Run(method, func(t *testing.T) {
			r := bodilessCall(t, method, secret, `{"amount":"5","note":"a b&c"}`)
			if err := wh.Verify(payload(r.Method, r.RequestURI, r.Header), r.Header); err != nil {
				t.Fatalf("%s %s: %v", r.Method, r.RequestURI, err)
			}
			other := map[string]string{"DELETE": "GET", "GET": "DELETE"}[method]
			with := func(k, v string) http.Header {
				h := r.Header.Clone()
				h.Set(k, v)
				return h
			}
			for name, p := range map[string][]byte{
				"method":      payload(other, r.RequestURI, r.Header),
				"path":        payload(r.Method, strings.Replace(r.RequestURI, "/refund", "/charge", 1), r.Header),
				"query":       payload(r.Method, strings.Replace(r.RequestURI, "amount=5", "amount=5000", 1), r.Header),
				"user":        payload(r.Method, r.RequestURI, with("X-Coachd-User-Id", "usr_mallory")),
				"session":     payload(r.Method, r.RequestURI, with("X-Coachd-Session-Id", "sess_2")),
				"tool_use_id": payload(r.Method, r.RequestURI, with("X-Coachd-Tool-Use-Id", "toolu_2")),
				"empty body":  nil,
			} {
				if err := wh.Verify(p, r.Header); err == nil {
					t.Errorf("another %s still verifies: %q", name, p)
				}
			}
		})
	}
}

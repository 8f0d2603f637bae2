package tools_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
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

func newSecret(t *testing.T) string {
	var b [32]byte
	rand.Read(b[:])
	return "whsec_" + base64.StdEncoding.EncodeToString(b[:])
}

// TestWebhookSigned: a call is signed the Standard Webhooks way and the
// reference library verifies it; a tool's own secret wins over the
// server's; a bad secret is a problem with its line; no secret, no
// signature.
func TestWebhookSigned(t *testing.T) {
	var mu sync.Mutex
	var got struct {
		h    http.Header
		body []byte
	}
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got.h, got.body = r.Header.Clone(), b
		mu.Unlock()
		io.WriteString(w, `{"ok":true}`)
	}))
	defer app.Close()
	global, own := newSecret(t), newSecret(t)
	vars := map[string]string{"APP": app.URL, "OWN": own}
	load := func(extra string) *tools.Webhook {
		t.Helper()
		src := "name: hook\ndescription: d\nurl: ${APP}/hook\n" + extra
		w, err := tools.ParseWebhook("tools/hook.yaml", []byte(src), func(k string) string { return vars[k] }, loopback)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	call := func(w *tools.Webhook) (http.Header, []byte) {
		t.Helper()
		res, err := w.Execute(context.Background(), coachd.ToolCall{ID: "toolu_1", Name: "hook", Input: []byte(`{"zone":"downtown"}`)}, env)
		if err != nil || res.IsError {
			t.Fatalf("%+v %v", res, err)
		}
		mu.Lock()
		defer mu.Unlock()
		return got.h, got.body
	}
	verify := func(secret string, h http.Header, body []byte) error {
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			t.Fatal(err)
		}
		return wh.Verify(body, h)
	}

	w := load("")
	w.UseSecret(mustSecret(t, global))
	h, body := call(w)
	if err := verify(global, h, body); err != nil {
		t.Errorf("the server's secret: %v (%v)", err, h)
	}
	if err := verify(global, h, []byte(strings.Replace(string(body), "downtown", "uptown", 1))); err == nil {
		t.Error("a changed body still verifies")
	}
	w = load("secret: ${OWN}\n")
	w.UseSecret(mustSecret(t, global))
	h, body = call(w)
	if verify(own, h, body) != nil || verify(global, h, body) == nil {
		t.Errorf("the tool's own secret does not win: %v", h)
	}
	if h, _ = call(load("")); h.Get("webhook-signature") != "" {
		t.Errorf("signed without a secret: %v", h)
	}
	_, err := tools.ParseWebhook("tools/hook.yaml", []byte("name: hook\ndescription: d\nurl: https://example.com\nsecret: hunter2\n"),
		func(string) string { return "" }, nil)
	if err == nil || !strings.Contains(err.Error(), "tools/hook.yaml:4: secret: a webhook secret is whsec_") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("bad secret: %v", err)
	}
}

func mustSecret(t *testing.T, s string) tools.WebhookSecret {
	k, err := tools.ParseWebhookSecret(s)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

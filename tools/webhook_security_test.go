package tools_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/tools"
)

// Issue 20 finding 1: webhook tools followed redirects and reached any
// address, forwarding secret headers and leaking URL secrets in Referer.

// counter is an "internal" service that must never be reached.
func counter(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		io.WriteString(w, "INTERNAL SECRET BODY")
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func call(t *testing.T, w *tools.Webhook, input string) coachd.ToolResult {
	t.Helper()
	res, err := w.Execute(context.Background(), coachd.ToolCall{ID: "toolu_1", Input: json.RawMessage(input)}, env)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestSecurityWebhookRedirect(t *testing.T) {
	internal, hits := counter(t)
	var referer atomic.Value
	referer.Store("")
	edge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		referer.Store(r.Header.Get("Referer"))
		http.Redirect(w, r, internal.URL+"/latest/meta-data", http.StatusFound)
	}))
	defer edge.Close()
	// The secret is in the URL and in a header: neither may travel.
	res := call(t, hook(t, edge.URL+"/zones?token=${ZONE_KEY}", ""), `{"zone":"A"}`)
	if !res.IsError || !strings.Contains(res.Content, "redirect") || strings.Contains(res.Content, "INTERNAL") {
		t.Fatalf("redirect followed or not reported: %+v", res)
	}
	if strings.Contains(res.Content, "s3cret") {
		t.Fatalf("secret in the result: %q", res.Content)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the redirect target got %d request(s) (secret headers forwarded)", n)
	}
	if r := referer.Load().(string); r != "" {
		t.Fatalf("Referer sent: %q", r)
	}
}

func TestSecurityWebhookLoopback(t *testing.T) {
	internal, hits := counter(t)
	port := internal.URL[strings.LastIndex(internal.URL, ":"):]
	t.Run("HostnameResolvingToLoopback", func(t *testing.T) {
		res := call(t, hookWith(t, "http://localhost"+port+"/x", "", nil), `{}`)
		if !res.IsError || !strings.Contains(res.Content, "loopback address") || !strings.Contains(res.Content, "--webhook-allow") {
			t.Fatalf("localhost reached without an allow list: %+v", res)
		}
		if hits.Load() != 0 {
			t.Fatal("the loopback service was reached")
		}
	})
	t.Run("LiteralAtLoad", func(t *testing.T) {
		for url, want := range map[string]string{
			internal.URL: "loopback",
			"http://169.254.169.254/latest/meta-data": "link-local",
			"http://10.1.2.3/":                        "private",
			"http://[::ffff:127.0.0.1]:80/":           "loopback",
			"http://0.0.0.0:80/":                      "unspecified",
		} {
			src := "name: x\ndescription: d\nurl: " + url + "\n"
			_, err := tools.ParseWebhook("tools/x.yaml", []byte(src), func(string) string { return "" }, nil)
			if err == nil || !strings.Contains(err.Error(), "tools/x.yaml:3: url: ") || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: err = %v, want a %s problem", url, err, want)
			}
		}
	})
	t.Run("AllowListAdmits", func(t *testing.T) {
		before := hits.Load()
		res := call(t, hookWith(t, "http://localhost"+port+"/x", "", mustPolicy("127.0.0.1/32,::1/128")), `{}`)
		if res.IsError || res.Content != "INTERNAL SECRET BODY" || hits.Load() != before+1 {
			t.Fatalf("allow-listed loopback refused: %+v", res)
		}
	})
	t.Run("ToolCannotWiden", func(t *testing.T) {
		res := call(t, hookWith(t, "http://localhost"+port+"/x", "allow: [127.0.0.1/32, '::1/128', localhost]\n", nil), `{}`)
		if !res.IsError || !strings.Contains(res.Content, "loopback address") {
			t.Fatalf("a tool's allow list widened the operator's policy: %+v", res)
		}
	})
	t.Run("ToolNarrows", func(t *testing.T) {
		res := call(t, hookWith(t, "http://localhost"+port+"/x", "allow: [10.0.0.0/8]\n", mustPolicy("127.0.0.1/32,::1/128")), `{}`)
		if !res.IsError || !strings.Contains(res.Content, "not in the tool's allow list") {
			t.Fatalf("a tool's allow list did not narrow: %+v", res)
		}
	})
}

func TestSecurityWebhookPolicyKinds(t *testing.T) {
	p := mustPolicy("")
	for _, s := range []string{"127.0.0.1", "::1", "169.254.169.254", "fe80::1", "10.0.0.1", "172.16.5.4", "192.168.1.1",
		"fd00::1", "100.64.0.1", "0.0.0.0", "::", "224.0.0.1", "255.255.255.255", "::ffff:10.0.0.1"} {
		if err := p.Check("h", netip.MustParseAddr(s)); err == nil {
			t.Errorf("%s allowed by the default policy", s)
		}
	}
	for _, s := range []string{"1.1.1.1", "2606:4700::1111", "8.8.8.8"} {
		if err := p.Check("h", netip.MustParseAddr(s)); err != nil {
			t.Errorf("%s refused: %v", s, err)
		}
	}
	if _, err := tools.ParseAddrPolicy("10.0.0.0/8,not a host"); err == nil {
		t.Error("a bad allow entry was accepted")
	}
}

func TestSecurityWebhookQueryCollision(t *testing.T) {
	srv, got := queryServer(t)
	w := hook(t, srv.URL+"/q?api_key=${ZONE_KEY}", "method: GET\n")
	res := call(t, w, `{"api_key":"attacker"}`)
	if !res.IsError || !strings.Contains(res.Content, `"api_key" collides`) || got.Load().(string) != "" {
		t.Fatalf("colliding query key sent: %+v, server saw %q", res, got.Load())
	}
	if res := call(t, w, `{"zone":"A"}`); res.IsError || got.Load().(string) != "api_key=s3cret&zone=A" {
		t.Fatalf("plain GET: %+v, query %q", res, got.Load())
	}
}

// queryServer is a webhook endpoint that keeps the raw query of the last
// request it got ("" before any).
func queryServer(t *testing.T) (*httptest.Server, *atomic.Value) {
	t.Helper()
	got := &atomic.Value{}
	got.Store("")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.URL.RawQuery)
		io.WriteString(w, "{}")
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

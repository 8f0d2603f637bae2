package tools_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/tools"
)

// loopback is the policy the tests' httptest servers need: loopback is
// refused unless the operator allows it.
var loopback = mustPolicy("127.0.0.1/32")

func mustPolicy(list string) *tools.AddrPolicy {
	p, err := tools.ParseAddrPolicy(list)
	if err != nil {
		panic(err)
	}
	return p
}

func hook(t *testing.T, url, extra string) *tools.Webhook {
	t.Helper()
	return hookWith(t, url, extra, loopback)
}

func hookWith(t *testing.T, url, extra string, policy *tools.AddrPolicy) *tools.Webhook {
	t.Helper()
	method := "method: POST\n"
	if strings.Contains(extra, "method:") {
		method = ""
	}
	src := "name: lookup_zone\ndescription: Look up a zone.\n" + method + "url: " + url + "\nheaders:\n  Authorization: Bearer ${ZONE_KEY}\n" +
		"input_schema:\n  type: object\n  properties:\n    zone: {type: string}\n" + extra
	w, err := tools.ParseWebhook("tools/lookup_zone.yaml", []byte(src), func(k string) string {
		if k == "ZONE_KEY" {
			return "s3cret"
		}
		return ""
	}, policy)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

var env = coachd.ToolEnv{User: &coachd.User{ID: "usr_1"}, Session: &coachd.Session{ID: "sess_1"}}

func TestWebhook(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		var got *http.Request
		var body map[string]any
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got = r
			json.NewDecoder(r.Body).Decode(&body)
			io.WriteString(w, `{"zone":"honey_hole"}`)
		}))
		defer srv.Close()
		w := hook(t, srv.URL+"/zones", "")
		res, err := w.Execute(context.Background(), coachd.ToolCall{ID: "toolu_1", Input: json.RawMessage(`{"zone":"A"}`)}, env)
		if err != nil || res.IsError || res.Content != `{"zone":"honey_hole"}` {
			t.Fatalf("%+v %v", res, err)
		}
		if got.Header.Get("Authorization") != "Bearer s3cret" || got.Header.Get("X-Coachd-User-Id") != "usr_1" || got.Header.Get("X-Coachd-Session-Id") != "sess_1" {
			t.Fatalf("headers %v", got.Header)
		}
		if body["user_id"] != "usr_1" || body["session_id"] != "sess_1" || body["input"].(map[string]any)["zone"] != "A" {
			t.Fatalf("body %v", body)
		}
		if d := w.Definition(); d.Name != "lookup_zone" || !strings.Contains(string(d.InputSchema), `"zone"`) || strings.Contains(string(d.InputSchema), "s3cret") {
			t.Fatalf("definition %+v", d)
		}
	})
	t.Run("ErrTimeout", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(time.Second):
			}
		}))
		defer srv.Close()
		w := hook(t, srv.URL+"/slow?token=${ZONE_KEY}", "timeout: 100ms\n")
		res, _ := w.Execute(context.Background(), coachd.ToolCall{Input: json.RawMessage(`{}`)}, env)
		if !res.IsError || !strings.Contains(res.Content, "did not answer within 100ms") || strings.Contains(res.Content, "s3cret") {
			t.Fatalf("%+v", res)
		}
	})
	t.Run("ErrNon2xx", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "zone service down", http.StatusBadGateway)
		}))
		defer srv.Close()
		res, _ := hook(t, srv.URL, "").Execute(context.Background(), coachd.ToolCall{Input: json.RawMessage(`{}`)}, env)
		if !res.IsError || !strings.Contains(res.Content, "HTTP 502: zone service down") {
			t.Fatalf("%+v", res)
		}
	})
	t.Run("ErrOversize", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, strings.Repeat("x", 2048))
		}))
		defer srv.Close()
		res, _ := hook(t, srv.URL, "max_response_bytes: 1024\n").Execute(context.Background(), coachd.ToolCall{Input: json.RawMessage(`{}`)}, env)
		if !res.IsError || !strings.Contains(res.Content, "larger than 1024 bytes") {
			t.Fatalf("%+v", res)
		}
	})
	t.Run("ErrDefinition", func(t *testing.T) {
		src := "name: Bad Name\nurl: ftp://x\nmethod: TRACE\nheaders:\n  X-Key: ${MISSING}\nbogus: 1\ntimeout: 1h\n"
		_, err := tools.ParseWebhook("tools/bad.yaml", []byte(src), func(string) string { return "" }, nil)
		if err == nil {
			t.Fatal("no error")
		}
		for _, want := range []string{"tools/bad.yaml:1: name must be", "tools/bad.yaml:2: url must be", "tools/bad.yaml:3: method must be",
			"tools/bad.yaml:5: environment variable MISSING is not set", "tools/bad.yaml:6: unknown key \"bogus\"", "tools/bad.yaml:7: timeout"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("missing %q in:\n%v", want, err)
			}
		}
	})
}

func TestWebhookEnvDefault(t *testing.T) {
	src := "name: hook\ndescription: d\nurl: ${APP_URL:-https://app.example.com}/zones\nheaders:\n  X-Key: ${KEY:-none}\n"
	w, err := tools.ParseWebhook("tools/hook.yaml", []byte(src), func(string) string { return "" }, nil)
	if err != nil {
		t.Fatalf("defaults not used: %v", err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Header.Get("X-Key")+" "+r.URL.Path)
	}))
	defer srv.Close()
	w = hookWithSrc(t, src, map[string]string{"APP_URL": srv.URL, "KEY": "k1"})
	if res, _ := w.Execute(context.Background(), coachd.ToolCall{Input: json.RawMessage(`{}`)}, env); res.IsError || res.Content != "k1 /zones" {
		t.Fatalf("set variables not used: %+v", res)
	}
}

func hookWithSrc(t *testing.T, src string, vars map[string]string) *tools.Webhook {
	t.Helper()
	w, err := tools.ParseWebhook("tools/hook.yaml", []byte(src), func(k string) string { return vars[k] }, loopback)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestWebhookRequiresApproval(t *testing.T) {
	parse := func(extra string) (*tools.Webhook, error) {
		src := "name: refund\ndescription: d\nurl: https://app.example.com/refund\n" + extra
		return tools.ParseWebhook("tools/refund.yaml", []byte(src), func(string) string { return "" }, nil)
	}
	for _, c := range []struct {
		extra string
		want  bool
	}{{"", false}, {"requires_approval: true\n", true}, {"requires_approval: false\n", false}} {
		w, err := parse(c.extra)
		if err != nil {
			t.Fatal(err)
		}
		if got := w.Definition().RequiresApproval; got != c.want {
			t.Errorf("%q: RequiresApproval %v, want %v", c.extra, got, c.want)
		}
	}
	if _, err := parse("requires_approval: sometimes\n"); err == nil || !strings.Contains(err.Error(), "tools/refund.yaml") {
		t.Fatalf("a non-boolean requires_approval: %v", err)
	}
}

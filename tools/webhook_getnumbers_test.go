package tools_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/coachd/coachd"
)

// TestWebhookGETNumbers: a GET webhook sends its input as query
// parameters. Numbers must reach the app as the model wrote them: a
// 64-bit id (a Discord or Twitter snowflake) went through float64 and
// arrived as another id, and a number past float64 was left out of the
// query, silently.
func TestWebhookGETNumbers(t *testing.T) {
	var got url.Values
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.Query()
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	w := hook(t, srv.URL+"/zones", "method: GET\n")
	for _, c := range []struct{ input, key, want string }{
		{`{"zone":"A","id":1234567890123456789}`, "id", "1234567890123456789"},
		{`{"zone":"A","filter":{"min":9007199254740993}}`, "filter", `{"min":9007199254740993}`},
		{`{"zone":"A","limit":1e999}`, "limit", "1e999"},
	} {
		got = nil
		res, err := w.Execute(context.Background(), coachd.ToolCall{ID: "toolu_1", Input: json.RawMessage(c.input)}, env)
		if err != nil || res.IsError {
			t.Fatalf("%s: %+v %v", c.input, res, err)
		}
		if got.Get(c.key) != c.want {
			t.Errorf("%s: the app got %s=%q, want %q (query %v)", c.input, c.key, got.Get(c.key), c.want, got)
		}
	}
}

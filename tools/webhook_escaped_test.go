package tools_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coachd/coachd/tools"
)

// TestSecurityWebhookEchoedSecretEscaped: PHP's json_encode (Laravel's
// error pages, most PHP APIs) writes "/" as "\/", so an app quoting a
// credential with a "/" in it (base64 keys, AWS secrets) in its JSON
// answer spelled it in a way the hiding missed, and the model, the
// history and the user read it.
func TestSecurityWebhookEchoedSecretEscaped(t *testing.T) {
	const key, urlKey = "sk/live+9f8e7d6c/5b4a", "qk/3c2b1a09/8f7e"
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		php := strings.NewReplacer("/", `\/`)
		io.WriteString(w, `{"error":"invalid token `+php.Replace(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))+
			`","key":"`+php.Replace(r.URL.Query().Get("key"))+`","zone":"downtown"}`)
	}))
	defer app.Close()
	src := "name: lookup_zone\ndescription: Look up a zone.\nmethod: GET\nurl: ${APP}/zones?key=${URL_KEY}\n" +
		"headers:\n  Authorization: Bearer ${ZONE_API_KEY}\n"
	vars := map[string]string{"APP": app.URL, "ZONE_API_KEY": key, "URL_KEY": urlKey}
	w, err := tools.ParseWebhook("tools/lookup_zone.yaml", []byte(src), func(k string) string { return vars[k] }, loopback)
	if err != nil {
		t.Fatal(err)
	}
	res := call(t, w, `{"zone":"downtown"}`)
	for _, part := range []string{"9f8e7d6c", "3c2b1a09"} {
		if strings.Contains(res.Content, part) {
			t.Errorf("a secret shows in the result: %q", res.Content)
		}
	}
	if !strings.Contains(res.Content, "downtown") {
		t.Errorf("the rest of the answer is gone: %q", res.Content)
	}
}

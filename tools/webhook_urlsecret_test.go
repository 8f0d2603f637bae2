package tools_test

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/tools"
)

// TestSecurityWebhookURLSecretEchoed: a pack's ${ENV} secret in the
// webhook URL (`?api_key=${KEY}`, a path token, a password) reached the
// tool result when the app quoted its request ("GET /zones?api_key=… not
// allowed", a debug echo): the model read it, the session stored it and
// the user's stream showed it. Only the header values were hidden.
func TestSecurityWebhookURLSecretEchoed(t *testing.T) {
	const key, token, pass = "ak_live_0a1b2c3d4e", "T0KEN/path+part", "pw_9z8y7x6w"
	status := http.StatusForbidden
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		u, p, _ := r.BasicAuth()
		// The request as sent and as the app decoded it.
		io.WriteString(w, "denied "+r.Method+" "+r.RequestURI+" key="+r.URL.Query().Get("api_key")+
			" path="+r.URL.Path+" auth="+u+":"+p+" zone="+r.URL.Query().Get("zone")+" app="+r.Host)
	}))
	defer app.Close()
	host := strings.TrimPrefix(app.URL, "http://")
	src := "name: lookup_zone\ndescription: Look up a zone.\nmethod: GET\n" +
		"url: http://bot:${ZONE_PASS}@${APP_HOST}/z/${ZONE_PATH}/zones?api_key=${ZONE_KEY}\n"
	vars := map[string]string{"APP_HOST": host, "ZONE_KEY": key, "ZONE_PATH": token, "ZONE_PASS": pass}
	w, err := tools.ParseWebhook("tools/lookup_zone.yaml", []byte(src), func(k string) string { return vars[k] }, loopback)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []int{http.StatusForbidden, http.StatusOK} {
		status = st
		res, err := w.Execute(context.Background(), coachd.ToolCall{ID: "toolu_1", Name: "lookup_zone", Input: []byte(`{"zone":"downtown"}`)}, env)
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{key, token, "T0KEN/path part", pass} {
			if strings.Contains(res.Content, secret) {
				t.Errorf("HTTP %d: the URL's secret %q is in the result: %q", st, secret, res.Content)
			}
		}
		// The rest of the answer, the address included, still reads.
		for _, want := range []string{"zone=downtown", "app=" + host, "denied GET"} {
			if !strings.Contains(res.Content, want) {
				t.Errorf("HTTP %d: %q is gone from the result: %q", st, want, res.Content)
			}
		}
	}
}

// TestSecurityWebhookURLPasswordEchoed: a URL's password goes to the app
// as a Basic credential (base64 of user:password), which an app quoting
// the Authorization header it got handed on unhidden; and a password
// inside a base URL from ${ENV} (${APP_URL} = https://bot:pw@app/) was not
// hidden at all, the value naming the host.
func TestSecurityWebhookURLPasswordEchoed(t *testing.T) {
	const pass = "pw_5t4r3e2w"
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, p, _ := r.BasicAuth()
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, "bad credentials: "+r.Header.Get("Authorization")+" (password "+p+"), zone closed")
	}))
	defer app.Close()
	appURL := strings.Replace(app.URL, "http://", "http://bot:"+pass+"@", 1)
	for _, src := range []string{
		"url: ${APP_URL}/zones\n",
		"url: http://bot:${ZONE_PASS}@" + strings.TrimPrefix(app.URL, "http://") + "/zones\n",
	} {
		vars := map[string]string{"APP_URL": appURL, "ZONE_PASS": pass}
		w, err := tools.ParseWebhook("tools/lookup_zone.yaml", []byte("name: lookup_zone\ndescription: Look up a zone.\n"+src),
			func(k string) string { return vars[k] }, loopback)
		if err != nil {
			t.Fatal(err)
		}
		res := call(t, w, `{"zone":"downtown"}`)
		basic := base64.StdEncoding.EncodeToString([]byte("bot:" + pass))
		if strings.Contains(res.Content, pass) || strings.Contains(res.Content, basic) || !strings.Contains(res.Content, "zone closed") {
			t.Errorf("%s: the password shows, or not the rest: %q", src, res.Content)
		}
	}
}

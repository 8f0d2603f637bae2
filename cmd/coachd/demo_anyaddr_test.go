package main

import (
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"testing"
)

// TestDemoURLOnAnyAddress: serve --demo on an unspecified address (the
// container's COACHD_ADDR=0.0.0.0:8080, or --addr :8080) printed
// "open http://[::]:8080/#key=…", a URL browsers refuse (Chrome blocks
// 0.0.0.0 and [::]; on Windows nothing answers there). The demo lines name
// the loopback address that reaches the server, and their curl works.
func TestDemoURLOnAnyAddress(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0"} {
		p := MustServe(t, nil, "--db", filepath.Join(t.TempDir(), "c.db"), "--demo", "--addr", addr)
		m := regexp.MustCompile(`open (\S+)/#key=(ck_\S+) to chat`).FindStringSubmatch(p.stdout.String())
		if m == nil {
			t.Fatalf("%s: no open line in\n%s", addr, p.stdout)
		}
		u, err := url.Parse(m[1])
		if err != nil || u.Hostname() != "127.0.0.1" {
			t.Errorf("--addr %s: the browser URL is %s, want one on 127.0.0.1", addr, m[1])
		}
		if !regexp.MustCompile(`try: curl -H 'Authorization: Bearer ` + m[2] + `' ` + regexp.QuoteMeta(m[1]) + `/v1/me`).MatchString(p.stdout.String()) {
			t.Errorf("--addr %s: the curl line does not use %s:\n%s", addr, m[1], p.stdout)
		}
		if u.Hostname() == "127.0.0.1" {
			req, _ := http.NewRequest("GET", m[1]+"/v1/me", nil)
			req.Header.Set("Authorization", "Bearer "+m[2])
			resp, err := http.DefaultClient.Do(req)
			if err != nil || resp.StatusCode != 200 {
				t.Errorf("--addr %s: GET %s/v1/me: %v %v", addr, m[1], resp, err)
			}
			if resp != nil {
				resp.Body.Close()
			}
		}
		p.stop(t)
	}
}

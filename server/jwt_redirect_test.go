package server_test

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coachd/coachd/internal/syncbuf"
	"github.com/coachd/coachd/server"
)

// TestSecurityJWKSRedirectNotFollowed: the key set is read from the URL
// the operator gave, never from where its answer redirects (an https URL
// redirected to http, or to any host, would let whoever answers there
// vouch for every user). A redirect is a failed fetch (503, logged with
// where it pointed); the other host gets no request, and a token signed
// by its key is not accepted.
func TestSecurityJWKSRedirectNotFollowed(t *testing.T) {
	evil, _ := rsa.GenerateKey(rand.Reader, 2048)
	var got atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Add(1)
		json.NewEncoder(w).Encode(rsaJWKS(evil))
	}))
	defer other.Close()
	target := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target+"/jwks.json", http.StatusFound)
	}))
	defer idp.Close()
	for _, c := range []struct {
		name   string
		client *http.Client
	}{{"DefaultClient", nil}, {"OperatorsClient", &http.Client{Timeout: 5 * time.Second}}} {
		t.Run(c.name, func(t *testing.T) {
			db := mustDB(t, filepath.Join(t.TempDir(), "c.db"), nil)
			logs := &syncbuf.Buffer{}
			srv := httptest.NewServer(server.New(server.Deps{Store: db, AdminKey: adminKey, Logger: slog.New(slog.NewTextHandler(logs, nil)),
				JWT: &server.JWTConfig{JWKSURL: idp.URL + "/jwks.json", Issuer: "https://id.example.com", Audience: "coachd", Client: c.client}}))
			defer srv.Close()
			e := &env{t: t, db: db, url: srv.URL}
			token := sign(t, map[string]any{"alg": "RS256", "kid": "r1"},
				map[string]any{"iss": "https://id.example.com", "aud": "coachd", "sub": "mallory", "exp": time.Now().Unix() + 600}, evil)
			r := e.do(request{method: "GET", path: "/v1/me", key: token})
			if r.status != http.StatusServiceUnavailable || got.Load() != 0 {
				t.Fatalf("got %d %s, the other host fetched %d times; want 503 and no fetch", r.status, r.body, got.Load())
			}
			if logged := logs.String(); !strings.Contains(logged, "redirect") || !strings.Contains(logged, "localhost") {
				t.Errorf("the log should say the key set redirected, and where:\n%s", logged)
			}
		})
	}
}

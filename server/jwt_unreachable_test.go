package server_test

import (
	"crypto/rand"
	"crypto/rsa"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd/internal/syncbuf"
	"github.com/coachd/coachd/server"
)

// TestJWKSUnreachable proves that when the identity provider's key set
// cannot be fetched, the caller learns neither its address nor that its
// token is bad: the answer is 503 with Retry-After and a generic message,
// and the address is in the server's log, without the token.
func TestJWKSUnreachable(t *testing.T) {
	// An address nobody listens on: a JWKS endpoint that is down.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := l.Addr().String()
	jwksURL := "http://" + host + "/internal/idp/jwks.json"
	l.Close()
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	db := mustDB(t, filepath.Join(t.TempDir(), "c.db"), nil)
	logs := &syncbuf.Buffer{}
	srv := httptest.NewServer(server.New(server.Deps{Store: db, AdminKey: adminKey, Logger: slog.New(slog.NewTextHandler(logs, nil)),
		JWT: &server.JWTConfig{JWKSURL: jwksURL, Issuer: "https://id.example.com", Audience: "coachd",
			Client: &http.Client{Timeout: 2 * time.Second}}}))
	defer srv.Close()
	e := &env{t: t, db: db, url: srv.URL}
	token := sign(t, map[string]any{"alg": "RS256", "kid": "whatever"},
		map[string]any{"iss": "x", "sub": "y", "exp": time.Now().Unix() + 60}, rk)
	r := e.do(request{method: "GET", path: "/v1/me", key: token})
	if strings.Contains(string(r.body), host) || strings.Contains(string(r.body), "/internal/idp/") {
		t.Fatalf("unauthenticated caller sees the internal JWKS address: %d %s", r.status, r.body)
	}
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
		t.Errorf("got %d Retry-After %q, want 503 with Retry-After: %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	if logged := logs.String(); !strings.Contains(logged, host) || strings.Contains(logged, token) {
		t.Errorf("log should name the JWKS address and not hold the token:\n%s", logged)
	}
}

// TestSecurityJWKSURLQueryNotLogged: a key set's URL may carry a key in
// its query (a gateway in front of the identity provider); the log names
// the address it could not reach, never the query.
func TestSecurityJWKSURLQueryNotLogged(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := l.Addr().String()
	l.Close()
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	db := mustDB(t, filepath.Join(t.TempDir(), "c.db"), nil)
	logs := &syncbuf.Buffer{}
	srv := httptest.NewServer(server.New(server.Deps{Store: db, AdminKey: adminKey, Logger: slog.New(slog.NewTextHandler(logs, nil)),
		JWT: &server.JWTConfig{JWKSURL: "http://" + host + "/jwks.json?api_key=s3cret", Issuer: "https://id.example.com", Audience: "coachd",
			Client: &http.Client{Timeout: 2 * time.Second}}}))
	defer srv.Close()
	e := &env{t: t, db: db, url: srv.URL}
	token := sign(t, map[string]any{"alg": "RS256", "kid": "whatever"},
		map[string]any{"iss": "x", "sub": "y", "exp": time.Now().Unix() + 60}, rk)
	if r := e.do(request{method: "GET", path: "/v1/me", key: token}); r.status != http.StatusServiceUnavailable {
		t.Fatalf("%d %s, want 503", r.status, r.body)
	}
	if logged := logs.String(); !strings.Contains(logged, host+"/jwks.json") || strings.Contains(logged, "s3cret") {
		t.Errorf("log should name the JWKS address without its query:\n%s", logged)
	}
}

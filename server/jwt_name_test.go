package server_test

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/coachd/coachd/client"
	"github.com/coachd/coachd/server"
)

// TestSecurityJWTClaimsText: a token's name claim is what its user typed
// into the identity provider's profile. It named the coachd user as
// written: a NUL made every request of that user a 400 on PostgreSQL
// (and was stored on SQLite), and a bidi override or zero-width
// characters spoof another name where the admin lists users. The name
// is kept without control and invisible formatting characters (the
// subject when nothing is left); a subject with a NUL or invalid UTF-8
// is not an identity: 401, alike on both backends.
func TestSecurityJWTClaimsText(t *testing.T) {
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(rsaJWKS(rk))
	}))
	defer jwks.Close()
	forEachBackend(t, func(t *testing.T, dsn string) {
		db := mustDB(t, dsn, nil)
		srv := httptest.NewServer(server.New(server.Deps{Store: db, AdminKey: adminKey, Limits: server.Limits{DefaultBudget: 5000},
			JWT: &server.JWTConfig{JWKSURL: jwks.URL, Issuer: "https://id.example.com", Audience: "coachd"}}))
		defer srv.Close()
		e := &env{t: t, db: db, url: srv.URL, admin: client.New(srv.URL, adminKey, nil)}
		now := time.Now().Unix()
		me := func(sub, name string) (int, map[string]any) {
			c := map[string]any{"iss": "https://id.example.com", "aud": "coachd", "sub": sub, "name": name, "exp": now + 300}
			r := e.do(request{method: "GET", path: "/v1/me", key: sign(t, map[string]any{"alg": "RS256", "kid": "r1"}, c, rk)})
			var out map[string]any
			json.Unmarshal(r.body, &out)
			return r.status, out
		}
		for _, tc := range []struct{ sub, name, want string }{
			{"u1", "A\x00da", "Ada"},
			{"u2", "\u202Enimda\u200B", "nimda"},
			{"u3", "\x07\u2028", "u3"},
		} {
			if st, out := me(tc.sub, tc.name); st != 200 || out["name"] != tc.want {
				t.Errorf("name %q: %d %v, want 200 named %q", tc.name, st, out, tc.want)
			}
		}
		if st, out := me("u\x004", "Bo"); st != 401 {
			t.Errorf("sub with a NUL: %d %v, want 401", st, out)
		}
		// Claims that are not UTF-8 were read with U+FFFD in place of each
		// bad byte: "u\xff5" and "u\xfe5" were one subject, one user.
		// So are lone surrogates, written as escapes in valid UTF-8.
		for _, sub := range []string{"u\xff5", "u\xfe5", `u\udcff5`, `u\ud8005`} {
			raw := []byte(`{"iss":"https://id.example.com","aud":"coachd","sub":"` + sub + `","exp":` + fmt.Sprint(now+300) + `}`)
			r := e.do(request{method: "GET", path: "/v1/me", key: signRaw(t, `{"alg":"RS256","kid":"r1"}`, raw, rk)})
			if r.status != 401 {
				t.Errorf("sub %q: %d %s, want 401", sub, r.status, r.body)
			}
		}
	})
}

// signRaw makes a JWT of the given header and claims bytes, as written.
func signRaw(t *testing.T, head string, claims []byte, key *rsa.PrivateKey) string {
	t.Helper()
	signed := b64([]byte(head)) + "." + b64(claims)
	digest := sha256.Sum256([]byte(signed))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	return signed + "." + b64(sig)
}

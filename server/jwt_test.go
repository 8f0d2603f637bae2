package server_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd/client"
	"github.com/coachd/coachd/server"
)

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// sign makes a JWT with the given header and claims.
func sign(t *testing.T, head, claims map[string]any, key crypto.Signer) string {
	t.Helper()
	h, _ := json.Marshal(head)
	c, _ := json.Marshal(claims)
	signed := b64(h) + "." + b64(c)
	digest := sha256.Sum256([]byte(signed))
	var sig []byte
	switch k := key.(type) {
	case *rsa.PrivateKey:
		sig, _ = rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, digest[:])
	case *ecdsa.PrivateKey:
		r, s, _ := ecdsa.Sign(rand.Reader, k, digest[:])
		sig = append(r.FillBytes(make([]byte, 32)), s.FillBytes(make([]byte, 32))...)
	}
	return signed + "." + b64(sig)
}

// TestJWTAuth: an app's identity provider's tokens authenticate its users
// (created on first sight), checked for signature, algorithm, issuer,
// audience and expiry; coachd keys keep working.
func TestJWTAuth(t *testing.T) {
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	ek, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{
			{"kty": "RSA", "kid": "r1", "n": b64(rk.N.Bytes()), "e": b64(big.NewInt(int64(rk.E)).Bytes())},
			{"kty": "EC", "kid": "e1", "crv": "P-256", "x": b64(ek.X.FillBytes(make([]byte, 32))), "y": b64(ek.Y.FillBytes(make([]byte, 32)))},
		}})
	}))
	defer jwks.Close()
	db := mustDB(t, filepath.Join(t.TempDir(), "c.db"), nil)
	srv := httptest.NewServer(server.New(server.Deps{Store: db, AdminKey: adminKey, Limits: server.Limits{DefaultBudget: 5000},
		JWT: &server.JWTConfig{JWKSURL: jwks.URL, Issuer: "https://id.example.com", Audience: "coachd"}}))
	defer srv.Close()
	e := &env{t: t, db: db, url: srv.URL, admin: client.New(srv.URL, adminKey, nil)}
	now := time.Now().Unix()
	claims := func(over map[string]any) map[string]any {
		c := map[string]any{"iss": "https://id.example.com", "aud": []string{"coachd", "other"}, "sub": "user-42", "name": "Ada", "exp": now + 300}
		for k, v := range over {
			c[k] = v
		}
		return c
	}
	me := func(token string) (int, map[string]any) {
		r := e.do(request{method: "GET", path: "/v1/me", key: token})
		var out map[string]any
		json.Unmarshal(r.body, &out)
		return r.status, out
	}
	st, first := me(sign(t, map[string]any{"alg": "RS256", "kid": "r1"}, claims(nil), rk))
	if st != 200 || first["name"] != "Ada" || first["external_id"] != "https://id.example.com|user-42" || first["token_budget"] != 5000.0 {
		t.Fatalf("RS256: %d %v", st, first)
	}
	st, again := me(sign(t, map[string]any{"alg": "ES256", "kid": "e1"}, claims(map[string]any{"aud": "coachd"}), ek))
	if st != 200 || again["id"] != first["id"] {
		t.Fatalf("ES256, same subject: %d %v", st, again)
	}
	good := sign(t, map[string]any{"alg": "RS256", "kid": "r1"}, claims(nil), rk)
	parts := strings.Split(good, ".")
	tampered, _ := json.Marshal(claims(map[string]any{"sub": "admin"}))
	for name, token := range map[string]string{
		"WrongIssuer": sign(t, map[string]any{"alg": "RS256", "kid": "r1"}, claims(map[string]any{"iss": "https://evil.example"}), rk),
		"WrongAud":    sign(t, map[string]any{"alg": "RS256", "kid": "r1"}, claims(map[string]any{"aud": "someone-else"}), rk),
		"Expired":     sign(t, map[string]any{"alg": "RS256", "kid": "r1"}, claims(map[string]any{"exp": now - 3600}), rk),
		"NoExpiry":    sign(t, map[string]any{"alg": "RS256", "kid": "r1"}, map[string]any{"iss": "https://id.example.com", "aud": "coachd", "sub": "x"}, rk),
		"UnknownKid":  sign(t, map[string]any{"alg": "RS256", "kid": "nope"}, claims(nil), rk),
		"WrongKey":    sign(t, map[string]any{"alg": "ES256", "kid": "r1"}, claims(nil), ek),
		"AlgNone":     parts[0][:0] + b64([]byte(`{"alg":"none","kid":"r1"}`)) + "." + parts[1] + ".",
		"HS256":       b64([]byte(`{"alg":"HS256","kid":"r1"}`)) + "." + parts[1] + "." + parts[2],
		"Tampered":    parts[0] + "." + b64(tampered) + "." + parts[2],
		"Garbage":     "not.a.jwt",
	} {
		if st, body := me(token); st != 401 {
			t.Errorf("%s: %d %v", name, st, body)
		}
	}
	// The admin revokes the user: its tokens stop working too (deleting
	// it would not do: the next token makes it again), until a rotation.
	uid, _ := first["id"].(string)
	if r := e.do(request{method: "DELETE", path: "/v1/users/" + uid + "/key", key: adminKey}); r.status != 204 {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}
	if st, body := me(good); st != 401 || !strings.Contains(fmt.Sprint(body), "revoked") {
		t.Fatalf("a revoked user's token: %d %v", st, body)
	}
	if r := e.do(request{method: "GET", path: "/v1/users/" + uid, key: adminKey}); !strings.Contains(string(r.body), `"revoked":true`) {
		t.Errorf("the admin's view of a revoked user: %s", r.body)
	}
	if r := e.do(request{method: "POST", path: "/v1/users/" + uid + "/key", key: adminKey}); r.status != 200 {
		t.Fatalf("rotate: %d %s", r.status, r.body)
	}
	if st, body := me(good); st != 200 || body["id"] != uid || body["revoked"] != nil {
		t.Fatalf("after a rotation: %d %v", st, body)
	}
	// Keys still work, and the admin sees the user the token created.
	u, key, err := e.admin.CreateUser(t.Context(), "bo", nil)
	if err != nil {
		t.Fatal(err)
	}
	if st, out := me(key); st != 200 || out["id"] != u.ID {
		t.Fatalf("API key: %d %v", st, out)
	}
}

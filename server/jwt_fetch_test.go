package server_test

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coachd/coachd/server"
)

// movingClock is a clock the test moves by hand.
type movingClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *movingClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *movingClock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// rsaJWKS is the key set that holds rk as kid "r1".
func rsaJWKS(rk *rsa.PrivateKey) map[string]any {
	return map[string]any{"keys": []map[string]string{
		{"kty": "RSA", "kid": "r1", "n": b64(rk.N.Bytes()), "e": b64(big.NewInt(int64(rk.E)).Bytes())},
	}}
}

// TestJWKSFetchDoesNotBlock proves that a JWKS fetch that hangs, started
// by a token naming a kid nobody has, does not hold up a token whose key
// is cached, and that tokens with unknown kids share one fetch and, once
// it failed, do not fetch again until the retry interval has passed.
func TestJWKSFetchDoesNotBlock(t *testing.T) {
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	var hang atomic.Bool
	var fetches atomic.Int64
	inFlight := make(chan struct{}, 8)
	release := make(chan struct{})
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		if hang.Load() {
			inFlight <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return // an empty body: the fetch fails
		}
		json.NewEncoder(w).Encode(rsaJWKS(rk))
	}))
	defer jwks.Close()
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	defer unblock()
	clock := &movingClock{t: time.Now()}
	db := mustDB(t, filepath.Join(t.TempDir(), "c.db"), nil)
	// The fetching client has no timeout of its own: only release ends a
	// hanging fetch.
	srv := httptest.NewServer(server.New(server.Deps{Store: db, AdminKey: adminKey, Clock: clock,
		JWT: &server.JWTConfig{JWKSURL: jwks.URL, Issuer: "https://id.example.com", Audience: "coachd", Client: &http.Client{}}}))
	defer srv.Close()
	e := &env{t: t, db: db, url: srv.URL}
	claims := func() map[string]any {
		return map[string]any{"iss": "https://id.example.com", "aud": "coachd", "sub": "user-1", "exp": clock.Now().Unix() + 3600}
	}
	good := sign(t, map[string]any{"alg": "RS256", "kid": "r1"}, claims(), rk)
	if r := e.do(request{method: "GET", path: "/v1/me", key: good}); r.status != 200 {
		t.Fatalf("valid token: %d %s", r.status, r.body)
	}

	// The JWKS stops answering; a minute later a client sends tokens
	// naming kids nobody has.
	hang.Store(true)
	clock.Add(61 * time.Second)
	before := fetches.Load()
	bogus := func(kid string) response {
		return e.do(request{method: "GET", path: "/v1/me", key: sign(t, map[string]any{"alg": "RS256", "kid": kid}, claims(), rk)})
	}
	answers := make(chan response, 2)
	go func() { answers <- bogus("attacker-a") }()
	<-inFlight

	// While that fetch hangs, the cached key (fetched a minute ago) serves.
	goodDone := make(chan response, 1)
	go func() { goodDone <- e.do(request{method: "GET", path: "/v1/me", key: good}) }()
	select {
	case r := <-goodDone:
		if r.status != 200 {
			t.Errorf("a valid token with a cached key during a fetch: %d %s", r.status, r.body)
		}
	case <-time.After(10 * time.Second): // a failure bound, not a synchronisation
		t.Errorf("a valid token with a cached key waits behind a JWKS fetch an unknown kid started")
	}

	// A second unknown kid joins the running fetch, or finds its failure.
	go func() { answers <- bogus("attacker-b") }()
	unblock()
	for range 2 {
		if r := <-answers; r.status != http.StatusServiceUnavailable {
			t.Errorf("unknown kid while the JWKS fails: %d %s, want 503", r.status, r.body)
		}
	}
	if r := bogus("attacker-c"); r.status != http.StatusServiceUnavailable {
		t.Errorf("unknown kid right after a failed fetch: %d %s, want 503", r.status, r.body)
	}
	if n := fetches.Load() - before; n != 1 {
		t.Errorf("%d JWKS fetches for 3 unknown kids at one moment, want 1", n)
	}

	// Once the retry interval has passed and the JWKS answers again, an
	// unknown kid fetches once more and is refused as unknown.
	hang.Store(false)
	clock.Add(10 * time.Second)
	if r := bogus("attacker-d"); r.status != http.StatusUnauthorized {
		t.Errorf("unknown kid after the JWKS recovered: %d %s, want 401", r.status, r.body)
	}
	if n := fetches.Load() - before; n != 2 {
		t.Errorf("%d JWKS fetches after the retry interval, want 2", n)
	}
}

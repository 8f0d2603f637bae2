package server

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/coachd/coachd"
)

// JWTConfig lets an app's own identity provider vouch for its users: a
// bearer token that is not a coachd key is verified as a JWT signed by a
// key of JWKSURL, issued by Issuer for Audience.
type JWTConfig struct {
	JWKSURL  string
	Issuer   string
	Audience string
	// Algorithms allowed (default RS256 and ES256); "none" and HMAC never are.
	Algorithms []string
	// Client fetches the key set (default: 10 s timeout); it follows no
	// redirect unless it has a CheckRedirect of its own.
	Client *http.Client
}

// jwtClaims are the claims coachd reads.
type jwtClaims struct {
	Issuer   string          `json:"iss"`
	Subject  string          `json:"sub"`
	Audience json.RawMessage `json:"aud"`
	Expiry   *float64        `json:"exp"`
	NotAfter *float64        `json:"nbf"`
	Name     string          `json:"name"`
}

// jwtVerifier checks tokens against a cached key set. The set is fetched
// again when a token names a key it does not know (at most once a minute)
// and when the key a token names is an hour old; after a failed fetch the
// next one waits jwksRetry. One fetch runs at a time, without the lock, so
// tokens whose key is cached are checked while it runs.
type jwtVerifier struct {
	cfg JWTConfig

	mu      sync.Mutex
	keys    map[string]crypto.PublicKey
	fetched time.Time     // when keys were fetched
	tried   time.Time     // when the last fetch began
	failed  error         // why the last fetch failed; nil when it did not
	running chan struct{} // closed when the running fetch ends; nil when none runs
}

const (
	// jwksRefresh is how long a key set serves before it is fetched again
	// for a key it lacks.
	jwksRefresh = time.Minute
	// jwksRetry is how long a failed fetch is remembered: tokens with an
	// unknown key are refused as unavailable meanwhile instead of each
	// fetching again.
	jwksRetry = 10 * time.Second
	// jwksTimeout bounds a fetch whatever the configured client allows,
	// since a fetch that never ends would stop every later one.
	jwksTimeout = time.Minute
)

func newJWTVerifier(cfg JWTConfig) *jwtVerifier {
	if len(cfg.Algorithms) == 0 {
		cfg.Algorithms = []string{"RS256", "ES256"}
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 10 * time.Second}
	}
	// The set is read from the URL configured, never where a redirect
	// points (https to http, another host): whoever answered there would
	// vouch for every user.
	cfg.Client = coachd.NoRedirects(cfg.Client)
	return &jwtVerifier{cfg: cfg}
}

var errJWT = errors.New("invalid token")

// verify returns the token's claims when its signature, issuer, audience
// and times hold.
func (v *jwtVerifier) verify(ctx context.Context, token string, now time.Time) (*jwtClaims, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 || len(token) > 8192 {
		return nil, errJWT
	}
	var head struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
	}
	if err := decodeSegment(parts[0], &head); err != nil || !slices.Contains(v.cfg.Algorithms, head.Alg) {
		return nil, fmt.Errorf("%w: algorithm %q is not allowed", errJWT, head.Alg)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return nil, errJWT
	}
	key, err := v.key(ctx, head.Kid, now)
	if err != nil {
		return nil, err
	}
	if err := checkSignature(head.Alg, key, []byte(parts[0]+"."+parts[1]), sig); err != nil {
		return nil, err
	}
	var c jwtClaims
	if err := decodeSegment(parts[1], &c); err != nil {
		return nil, errJWT
	}
	t := float64(now.Unix())
	switch {
	case c.Issuer != v.cfg.Issuer:
		return nil, fmt.Errorf("%w: wrong issuer", errJWT)
	case !audienceHas(c.Audience, v.cfg.Audience):
		return nil, fmt.Errorf("%w: wrong audience", errJWT)
	case c.Expiry == nil || t > *c.Expiry+jwtLeeway:
		return nil, fmt.Errorf("%w: expired", errJWT)
	case c.NotAfter != nil && t+jwtLeeway < *c.NotAfter:
		return nil, fmt.Errorf("%w: not valid yet", errJWT)
	case c.Subject == "" || len(c.Subject) > 255 || strings.IndexByte(c.Subject, 0) >= 0 ||
		// encoding/json reads a lone surrogate's escape as U+FFFD: two
		// subjects would be one user.
		strings.ContainsRune(c.Subject, utf8.RuneError):
		return nil, fmt.Errorf("%w: no subject", errJWT)
	}
	return &c, nil
}

// jwtLeeway is how many seconds a token's times may be off.
const jwtLeeway = 60

// jwtExpiry is the expiry (Unix seconds) of a token verify accepted; 0
// for any other.
func jwtExpiry(token string) float64 {
	var c jwtClaims
	if parts := strings.Split(token, "."); len(parts) == 3 && decodeSegment(parts[1], &c) == nil && c.Expiry != nil {
		return *c.Expiry
	}
	return 0
}

// decodeSegment decodes a token's header or claims. Bytes that are not
// UTF-8 are refused: encoding/json reads each as U+FFFD, which made two
// subjects one user.
func decodeSegment(seg string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return err
	}
	if !utf8.Valid(b) {
		return errJWT
	}
	return json.Unmarshal(b, v)
}

func audienceHas(raw json.RawMessage, want string) bool {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return one == want
	}
	var many []string
	return json.Unmarshal(raw, &many) == nil && slices.Contains(many, want)
}

func checkSignature(alg string, key crypto.PublicKey, signed, sig []byte) error {
	var h hash.Hash
	var ch crypto.Hash
	switch alg[2:] {
	case "256":
		h, ch = sha256.New(), crypto.SHA256
	case "384":
		h, ch = sha512.New384(), crypto.SHA384
	case "512":
		h, ch = sha512.New(), crypto.SHA512
	default:
		return errJWT
	}
	h.Write(signed)
	digest := h.Sum(nil)
	switch k := key.(type) {
	case *rsa.PublicKey:
		if !strings.HasPrefix(alg, "RS") || rsa.VerifyPKCS1v15(k, ch, digest, sig) != nil {
			return fmt.Errorf("%w: bad signature", errJWT)
		}
	case *ecdsa.PublicKey:
		size := (k.Curve.Params().BitSize + 7) / 8
		if !strings.HasPrefix(alg, "ES") || len(sig) != 2*size ||
			!ecdsa.Verify(k, digest, new(big.Int).SetBytes(sig[:size]), new(big.Int).SetBytes(sig[size:])) {
			return fmt.Errorf("%w: bad signature", errJWT)
		}
	default:
		return errJWT
	}
	return nil
}

// jwksError is a key set that could not be fetched: the token can be
// neither accepted nor refused, and the caller may try again after retry.
type jwksError struct {
	err   error
	retry time.Duration
}

func (e *jwksError) Error() string { return e.err.Error() }
func (e *jwksError) Unwrap() error { return e.err }

// key returns the key kid names. A cached key is returned at once, even
// an hour old while a fetch runs or cannot be made (it serves until a set
// without it replaces it). An unknown kid waits for the running fetch, or
// for one it starts when the last fetch is old enough; otherwise it is
// refused, as unknown or, when the last fetch failed, as unavailable.
func (v *jwtVerifier) key(ctx context.Context, kid string, now time.Time) (crypto.PublicKey, error) {
	v.mu.Lock()
	k, known := v.keys[kid]
	if known && now.Sub(v.fetched) < time.Hour {
		v.mu.Unlock()
		return k, nil
	}
	done := v.running
	if done == nil && v.mayFetch(now) {
		done = v.startFetch(ctx, now)
	}
	v.mu.Unlock()
	if known {
		return k, nil
	}
	if done != nil {
		select {
		case <-done:
		case <-ctx.Done():
			return nil, &jwksError{err: ctx.Err(), retry: time.Second}
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if k, ok := v.keys[kid]; ok {
		return k, nil
	}
	if v.failed != nil {
		return nil, &jwksError{err: v.failed, retry: max(v.tried.Add(jwksRetry).Sub(now), time.Second)}
	}
	return nil, fmt.Errorf("%w: unknown key %q", errJWT, kid)
}

// mayFetch reports whether a fetch may begin at now; v.mu is held.
func (v *jwtVerifier) mayFetch(now time.Time) bool {
	wait := jwksRefresh
	if v.failed != nil {
		wait = jwksRetry
	}
	return v.tried.IsZero() || now.Sub(v.tried) >= wait
}

// startFetch fetches the key set in the background and returns a channel
// closed when the set is stored or the failure remembered; v.mu is held.
// The fetch is not the request's: a caller that leaves does not cancel it
// for those waiting on it.
func (v *jwtVerifier) startFetch(ctx context.Context, now time.Time) chan struct{} {
	done := make(chan struct{})
	v.running, v.tried = done, now
	go func() {
		defer close(done)
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), jwksTimeout)
		defer cancel()
		keys, err := v.fetch(fctx)
		v.mu.Lock()
		defer v.mu.Unlock()
		v.running, v.failed = nil, err
		if err == nil {
			v.keys, v.fetched = keys, now
		}
	}()
	return done
}

func (v *jwtVerifier) fetch(ctx context.Context) (map[string]crypto.PublicKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.cfg.JWKSURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := v.cfg.Client.Do(req)
	if err != nil {
		// Its text quotes the URL, whose query may hold a key: the log
		// names the address only.
		if ue, ok := errors.AsType[*url.Error](err); ok {
			u := *req.URL
			u.User, u.RawQuery, u.Fragment = nil, "", ""
			return nil, fmt.Errorf("jwks: %s %s: %w", ue.Op, u.String(), ue.Err)
		}
		return nil, fmt.Errorf("jwks: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("jwks: HTTP %d", resp.StatusCode)
	}
	var set struct {
		Keys []struct {
			Kty, Kid, Crv, N, E, X, Y string
		} `json:"keys"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&set); err != nil {
		return nil, fmt.Errorf("jwks: %w", err)
	}
	keys := map[string]crypto.PublicKey{}
	b := func(s string) *big.Int {
		d, _ := base64.RawURLEncoding.DecodeString(s)
		return new(big.Int).SetBytes(d)
	}
	for _, k := range set.Keys {
		switch k.Kty {
		case "RSA":
			e := b(k.E)
			if !e.IsInt64() || e.Int64() < 3 {
				continue
			}
			keys[k.Kid] = &rsa.PublicKey{N: b(k.N), E: int(e.Int64())}
		case "EC":
			var curve elliptic.Curve
			switch k.Crv {
			case "P-256":
				curve = elliptic.P256()
			case "P-384":
				curve = elliptic.P384()
			default:
				continue
			}
			keys[k.Kid] = &ecdsa.PublicKey{Curve: curve, X: b(k.X), Y: b(k.Y)}
		}
	}
	return keys, nil
}

package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/coachd/coachd"
)

// APIKeyPrefix starts every user API key.
const APIKeyPrefix = "ck_"

// NewAPIKey returns a fresh user API key: "ck_" and 32 random bytes,
// base64url without padding.
func NewAPIKey() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("coachd: crypto/rand failed: " + err.Error()) // never happens on supported platforms
	}
	return APIKeyPrefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// HashAPIKey returns the SHA-256 of key in hex: the only form in which keys
// are stored. The key has 256 bits of entropy, so a fast hash is enough.
func HashAPIKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// bearer returns the token of an "Authorization: Bearer …" header.
func bearer(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// Authenticate returns the user whose API key the request carries.
// A missing, malformed or unknown key is EUNAUTHORIZED; a store failure is
// returned as is.
func (s *Server) Authenticate(r *http.Request) (*coachd.User, error) {
	key, ok := bearer(r)
	if !ok {
		return nil, coachd.Errorf(coachd.EUNAUTHORIZED, "missing API key: send Authorization: Bearer ck_…")
	}
	if !strings.HasPrefix(key, APIKeyPrefix) && s.jwt != nil {
		return s.authenticateJWT(r.Context(), key)
	}
	if !strings.HasPrefix(key, APIKeyPrefix) || len(key) > 256 {
		return nil, coachd.Errorf(coachd.EUNAUTHORIZED, "invalid API key")
	}
	u, err := s.store.FindUserByKeyHash(r.Context(), HashAPIKey(key))
	if coachd.ErrorCode(err) == coachd.ENOTFOUND {
		return nil, coachd.Errorf(coachd.EUNAUTHORIZED, "invalid API key")
	}
	if err != nil {
		return nil, err
	}
	return u, nil
}

// UserFrom returns the user requireUser authenticated, or nil.
func UserFrom(ctx context.Context) *coachd.User {
	u, _ := ctx.Value(userKey).(*coachd.User)
	return u
}

// WithUser returns ctx carrying u, as requireUser does.
func WithUser(ctx context.Context, u *coachd.User) context.Context {
	if st := stateFrom(ctx); st != nil {
		st.userID = u.ID
	}
	return context.WithValue(ctx, userKey, u)
}

// requireUser lets a request through only with a valid user API key, and
// puts the user in its context (UserFrom).
func (s *Server) requireUser(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, err := s.Authenticate(r)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		h.ServeHTTP(w, r.WithContext(WithUser(r.Context(), u)))
	})
}

// requireUserStream is requireUser for the stream endpoint: a missing or
// wrong key is an SSE error event, like every error before its stream.
func (s *Server) requireUserStream(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, err := s.Authenticate(r)
		if err != nil {
			s.StreamError(w, r, streamDialect(r), err)
			return
		}
		h.ServeHTTP(w, r.WithContext(WithUser(r.Context(), u)))
	})
}

// requireAdmin lets a request through only with the admin key. A valid user
// key is answered 403 (known caller, not allowed), anything else 401.
func (s *Server) requireAdmin(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.adminKey == "" {
			s.Error(w, r, coachd.Errorf(coachd.EFORBIDDEN, "admin routes are disabled: start coachd serve with --admin-key or COACHD_ADMIN_KEY"))
			return
		}
		key, ok := bearer(r)
		if !ok {
			s.Error(w, r, coachd.Errorf(coachd.EUNAUTHORIZED, "missing admin key: send Authorization: Bearer <admin key>"))
			return
		}
		// Compare digests so neither content nor length leaks through timing.
		got := sha256.Sum256([]byte(key))
		if subtle.ConstantTimeCompare(s.adminSum[:], got[:]) == 1 {
			h.ServeHTTP(w, r)
			return
		}
		if _, err := s.Authenticate(r); err == nil {
			s.Error(w, r, coachd.Errorf(coachd.EFORBIDDEN, "this route needs the admin key; user API keys are not accepted"))
			return
		} else if coachd.ErrorCode(err) != coachd.EUNAUTHORIZED {
			s.Error(w, r, err)
			return
		}
		s.Error(w, r, coachd.Errorf(coachd.EUNAUTHORIZED, "invalid admin key"))
	})
}

// authenticateJWT maps a verified token's issuer and subject to a coachd
// user, created with the default budget the first time it is seen.
func (s *Server) authenticateJWT(ctx context.Context, token string) (*coachd.User, error) {
	c, err := s.jwt.verify(ctx, token, s.clock.Now())
	if err != nil {
		if errors.Is(err, errJWT) {
			return nil, coachd.Errorf(coachd.EUNAUTHORIZED, "%v", err)
		}
		// The key set could not be fetched: the token may well be good, so
		// the caller is told to retry, not to drop it. What failed names
		// the identity provider's address; it is logged, never shown.
		retry := time.Second
		if je, ok := errors.AsType[*jwksError](err); ok {
			retry = je.retry
		}
		return nil, &coachd.Error{Code: coachd.EUPSTREAMBUSY, RetryAfter: retry, Err: err,
			Message: "the identity provider cannot be reached to check the token; try again later"}
	}
	ext := c.Issuer + "|" + c.Subject
	u, err := s.store.FindUserByExternalID(ctx, ext)
	if err == nil && u.Revoked {
		return nil, coachd.Errorf(coachd.EUNAUTHORIZED, "this user's access was revoked")
	}
	if coachd.ErrorCode(err) != coachd.ENOTFOUND {
		return u, err
	}
	name := displayName(c.Name)
	if name == "" || utf8.RuneCountInString(name) > UserNameMax {
		name = displayName(c.Subject)
	}
	if name == "" {
		name = "user"
	}
	sum := sha256.Sum256([]byte(ext))
	for _, n := range []string{name, truncate(name, UserNameMax-9) + "-" + hex.EncodeToString(sum[:4])} {
		u = &coachd.User{Name: n, TokenBudget: s.limits.DefaultBudget, ExternalID: ext}
		// No key is shown: this user signs in with the identity provider.
		err = s.store.CreateUser(ctx, u, HashAPIKey(NewAPIKey()))
		if coachd.ErrorCode(err) != coachd.ECONFLICT {
			break
		}
		// A concurrent first request created it, or the name is taken.
		if found, ferr := s.store.FindUserByExternalID(ctx, ext); ferr == nil {
			return found, nil
		}
	}
	if err != nil {
		return nil, err
	}
	s.logger.Info("user created from a token", "user_id", u.ID, "issuer", c.Issuer)
	return u, nil
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}

// displayName is a token's claim as a user name: what its user typed into
// the identity provider's profile, without control and invisible
// formatting characters (a NUL, which PostgreSQL cannot store; a bidi
// override or zero-width space that spoofs another name in the admin's
// list), trimmed.
func displayName(s string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) {
			return -1
		}
		return r
	}, s))
}

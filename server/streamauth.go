package server

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/coachd/coachd"
)

// errStreamRevoked and errStreamExpired end a session stream whose
// credentials stopped working.
var (
	errStreamRevoked = coachd.Errorf(coachd.EUNAUTHORIZED, "the credentials this stream was opened with were revoked")
	errStreamExpired = coachd.Errorf(coachd.EUNAUTHORIZED, "the token this stream was opened with expired")
)

// streamAuth is how a session stream checks, before each turn it has not
// sent yet, that the credentials it was opened with still work: a stream
// may stay open for days, and rotating a leaked key must not leave its
// holder reading the turns of whoever holds the new one. A key still
// names the user; a stream token's user is unchanged since the stream
// opened, or else the token is still on record (rotating or revoking the
// key updates the user, and deletes the tokens minted with it; an admin's
// edit of the user only updates it). An identity provider's token has
// not expired, and its user is not revoked (the token itself was checked
// at opening).
func (s *Server) streamAuth(r *http.Request, u *coachd.User, token bool) func(context.Context) error {
	key, ok := bearer(r)
	switch {
	case token:
		at, hash, session := u.UpdatedAt, hashStreamToken(r.URL.Query().Get("token")), r.PathValue("id")
		return func(ctx context.Context) error {
			now, err := s.store.FindUserByID(ctx, u.ID)
			if coachd.ErrorCode(err) == coachd.ENOTFOUND {
				return errStreamRevoked
			}
			if err != nil || now.UpdatedAt.Equal(at) {
				return err
			}
			kept, err := s.store.StreamTokenKept(ctx, hash, session)
			if err != nil {
				return err
			}
			if !kept {
				return errStreamRevoked
			}
			at = now.UpdatedAt // calls are one at a time (the stream's sender)
			return nil
		}
	case ok && strings.HasPrefix(key, APIKeyPrefix):
		hash := HashAPIKey(key)
		return func(ctx context.Context) error {
			now, err := s.store.FindUserByKeyHash(ctx, hash)
			if coachd.ErrorCode(err) == coachd.ENOTFOUND || err == nil && now.ID != u.ID {
				return errStreamRevoked
			}
			return err
		}
	case ok && s.jwt != nil:
		exp := jwtExpiry(key)
		return func(ctx context.Context) error {
			if float64(s.clock.Now().Unix()) > exp+jwtLeeway {
				return errStreamExpired
			}
			now, err := s.store.FindUserByID(ctx, u.ID)
			if coachd.ErrorCode(err) == coachd.ENOTFOUND || err == nil && now.Revoked {
				return errStreamRevoked
			}
			return err
		}
	}
	return nil
}

// whileAuthorized wraps a session stream's send: the first event of each
// turn after seen goes out only once check passes (a failure ends the
// stream; a client whose credentials still work reconnects with
// Last-Event-ID). The stream may run off its request (detach.go), so the
// check has its own deadline rather than the request's context.
func whileAuthorized(check func(context.Context) error, seen int64, send func(coachd.Event) error) func(coachd.Event) error {
	if check == nil {
		return send
	}
	return func(ev coachd.Event) error {
		if ev.Turn > seen {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err := check(ctx)
			cancel()
			if err != nil {
				return err
			}
			seen = ev.Turn
		}
		return send(ev)
	}
}

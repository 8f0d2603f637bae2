package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sse"
)

// resendKey is a chat request's Idempotency-Key and its body's hash: the
// same key with the same body again is the same request, sent again by a
// client that lost its answer.
type resendKey struct{ key, hash string }

type chatKeyContext struct{}

// chatKeyFrom is the key handleChatStream put in ctx, nil without one.
func chatKeyFrom(ctx context.Context) *resendKey {
	k, _ := ctx.Value(chatKeyContext{}).(*resendKey)
	return k
}

// withChatKey reads the request's Idempotency-Key and, with one, its
// body (decoded afterwards as usual) to hash it, and returns the request
// carrying the key for its turn's admission (prepare). Without the header
// it reads nothing: the request is as it came.
func withChatKey(r *http.Request) (*http.Request, *resendKey, error) {
	key, err := idempotencyKey(r)
	if err != nil || key == "" {
		return r, nil, err
	}
	b, rerr := io.ReadAll(r.Body)
	// decode reads the body again, and an error reading it (too large,
	// too slow) too, as it would have.
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(b), errReader{rerr}))
	if rerr != nil {
		return r, nil, nil
	}
	// The same JSON however it is spaced; a body that is none is
	// refused by decode, as without the key.
	var c bytes.Buffer
	if json.Compact(&c, b) != nil {
		return r, nil, nil
	}
	k := &resendKey{key: key, hash: requestHash(r.URL.Path, json.RawMessage(c.Bytes()))}
	return r.WithContext(context.WithValue(r.Context(), chatKeyContext{}, k)), k, nil
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) {
	if e.err == nil {
		return 0, io.EOF
	}
	return 0, e.err
}

// followKeyed answers a chat request whose key names a turn already, as
// long as the event log keeps that turn: with the turn's events (after
// Last-Event-ID when sent, which must be one of them), finished or still
// running, instead of a new turn. It reports whether it answered (an
// error too); false when the key names no turn (yet).
func (s *Server) followKeyed(w http.ResponseWriter, r *http.Request, dialect string, ck *resendKey) bool {
	u := UserFrom(r.Context())
	k, err := s.store.FindTurnKey(r.Context(), u.ID, ck.key)
	if coachd.ErrorCode(err) == coachd.ENOTFOUND {
		return false
	}
	if err == nil && k.Hash != ck.hash {
		err = &coachd.Error{Code: coachd.ECONFLICT, Message: "Idempotency-Key was already used for a different request",
			Details: []coachd.FieldError{{Field: "Idempotency-Key", Message: "was sent with another body: send a new message with a new key", Code: "reused"}}}
	}
	after := coachd.EventID{Turn: k.Turn}
	if last := r.Header.Get("Last-Event-ID"); err == nil && last != "" {
		if after, err = coachd.ParseEventID(last); err == nil && after.Turn != k.Turn {
			err = coachd.Invalid(coachd.FieldError{Field: "last_event_id",
				Message: fmt.Sprintf("is not an event of this request's turn (%d): send it again without Last-Event-ID", k.Turn), Code: "range"})
		}
	}
	var release func()
	if err == nil {
		release, err = s.streams.acquire(u.ID)
	}
	if err != nil {
		s.StreamError(w, r, dialect, err)
		return true
	}
	defer release()
	w.Header().Set("X-Coachd-Session-Id", k.SessionID)
	w.Header().Set("X-Coachd-Turn", strconv.FormatInt(k.Turn, 10))
	w.Header().Set("Idempotent-Replayed", "true")
	s.observer.StreamOpened()
	defer s.observer.StreamClosed()
	sw := sse.NewWriter(w, r, dialect, s.heartbeat)
	sw.SetWriteTimeout(s.writeTime)
	if s.hub.FollowBuffered(r.Context(), u.ID, k.SessionID, after, k.Turn, sw.Queue, sw.Flush) == nil {
		sw.End()
		return true
	}
	sw.Close()
	return true
}

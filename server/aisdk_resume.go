package server

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sse"
)

// handleUIChatResume is GET /v1/chat/stream/{chat}/stream, the URL
// DefaultChatTransport's reconnectToStream asks by default
// ({api}/{chatId}/stream, the api's query kept): useChat's resume
// (resume: true) on a page's load. It replays the chat's running turn
// from its start (the transport takes the stream as a replay) and follows
// it to its end; with no turn running, or no such chat of the user, 204,
// which the transport reads as nothing to resume.
func (s *Server) handleUIChatResume() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Query().Get("protocol"); p != "" && p != sse.AISDK {
			s.StreamError(w, r, sse.AISDK, coachd.Invalid(coachd.FieldError{Field: "protocol", Message: "must be ai-sdk", Code: "enum"}))
			return
		}
		if err := noBody(r); err != nil {
			s.StreamError(w, r, sse.AISDK, err)
			return
		}
		chat := r.PathValue("chat")
		if err := validChatID(chat); err != nil {
			s.StreamError(w, r, sse.AISDK, err)
			return
		}
		u := UserFrom(r.Context())
		id, _, _, err := s.store.FindFingerprint(r.Context(), u.ID, chatKey(chat))
		if err == nil {
			var tl coachd.TurnLog
			if tl, err = s.store.LatestTurn(r.Context(), u.ID, id); err == nil && (tl.Ended || tl.Turn == 0) {
				err = coachd.Errorf(coachd.ENOTFOUND, "no turn running")
			}
			if err == nil {
				s.followUIChat(w, r, u, id, tl.Turn)
				return
			}
		}
		if coachd.ErrorCode(err) != coachd.ENOTFOUND {
			s.StreamError(w, r, sse.AISDK, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// validChatID refuses, at the edge, a chat id no chat can have: useChat's
// id arrives in strict JSON (UTF-8, no NUL, 200 bytes at most), and
// Postgres would refuse the query of any other.
func validChatID(chat string) error {
	bad := func(msg, code string) error {
		return coachd.Invalid(coachd.FieldError{Field: "chat", Message: msg, Code: code})
	}
	switch {
	case len(chat) > 200:
		return bad("must be the chat's id, 1 to 200 characters", "length")
	case !utf8.ValidString(chat):
		return bad("is not valid UTF-8", "utf8")
	case strings.ContainsRune(chat, 0):
		return bad("must not contain NUL (U+0000) characters", "nul")
	}
	return nil
}

// followUIChat streams the session's running turn from its start to its
// end in the ai-sdk dialect.
func (s *Server) followUIChat(w http.ResponseWriter, r *http.Request, u *coachd.User, sessionID string, turn int64) {
	release, err := s.streams.acquire(u.ID)
	if err != nil {
		s.StreamError(w, r, sse.AISDK, err)
		return
	}
	defer release()
	w.Header().Set("X-Coachd-Session-Id", sessionID)
	s.observer.StreamOpened()
	defer s.observer.StreamClosed()
	sw := sse.NewWriter(w, r, sse.AISDK, s.heartbeat)
	sw.SetWriteTimeout(s.writeTime)
	send := whileAuthorized(s.streamAuth(r, u, false), turn, sw.Queue)
	if err := s.hub.FollowBuffered(r.Context(), u.ID, sessionID, coachd.EventID{Turn: turn}, turn, send, sw.Flush); err == nil {
		sw.End()
		return
	}
	sw.Close()
}

package server

import (
	"context"
	"net/http"
	"regexp"
	"unicode/utf8"

	"github.com/coachd/coachd"
)

// DefaultAgent is the agent of a session created without one.
const DefaultAgent = "default"

// SessionTitleMax bounds session titles.
const SessionTitleMax = 200

var agentNameRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

type sessionCreateRequest struct {
	Agent string `json:"agent"`
	Title string `json:"title"`
}

func (req sessionCreateRequest) Valid(context.Context) []coachd.FieldError {
	var errs []coachd.FieldError
	if req.Agent != "" && !agentNameRe.MatchString(req.Agent) {
		errs = append(errs, coachd.FieldError{Field: "agent", Message: "must be 1 to 64 lowercase letters, digits, '-' or '_'", Code: "format"})
	}
	if utf8.RuneCountInString(req.Title) > SessionTitleMax {
		errs = append(errs, coachd.FieldError{Field: "title", Message: "must be at most 200 characters", Code: "length"})
	}
	return errs
}

func (s *Server) handleSessionCreate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := decodeOptional[sessionCreateRequest](r)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		sess := &coachd.Session{
			UserID: UserFrom(r.Context()).ID,
			Agent:  req.Agent,
			Title:  req.Title,
			Status: coachd.SessionActive,
		}
		// The session's agent is one the runner has (the pack's default
		// when none is named), never a name chatting would then refuse.
		if s.runner != nil {
			ag, err := s.runner.AgentFor(req.Agent, false)
			if err != nil {
				s.Error(w, r, err)
				return
			}
			sess.Agent = ag.Name
		} else if sess.Agent == "" {
			sess.Agent = DefaultAgent
		}
		if err := s.store.CreateSession(r.Context(), sess); err != nil {
			s.Error(w, r, err)
			return
		}
		s.encode(w, r, http.StatusCreated, sess)
	})
}

func (s *Server) handleSessionList() http.Handler {
	type response struct {
		Sessions   []*coachd.Session `json:"sessions"`
		NextCursor string            `json:"next_cursor"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := newQuery(r)
		page := q.page()
		if err := q.err(); err != nil {
			s.Error(w, r, err)
			return
		}
		list, next, err := s.store.ListSessions(r.Context(), UserFrom(r.Context()).ID, page)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		if list == nil {
			list = []*coachd.Session{}
		}
		s.encode(w, r, http.StatusOK, response{Sessions: list, NextCursor: next})
	})
}

// findSession loads the caller's session named by the {id} path value.
func (s *Server) findSession(r *http.Request) (*coachd.Session, error) {
	id, err := pathID(r, coachd.PrefixSession, "session")
	if err != nil {
		return nil, err
	}
	sess, err := s.store.FindSession(r.Context(), UserFrom(r.Context()).ID, id)
	return sess, orNotFound(err, "session")
}

func (s *Server) handleSessionGet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sess, err := s.findSession(r)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		s.encode(w, r, http.StatusOK, sess)
	})
}

func (s *Server) handleSessionDelete() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := pathID(r, coachd.PrefixSession, "session")
		if err != nil {
			s.Error(w, r, err)
			return
		}
		if err := s.store.DeleteSession(r.Context(), UserFrom(r.Context()).ID, id); err != nil {
			s.Error(w, r, orNotFound(err, "session"))
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

func (s *Server) handleMessageList() http.Handler {
	type response struct {
		Messages   []*coachd.Message `json:"messages"`
		NextCursor string            `json:"next_cursor"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := pathID(r, coachd.PrefixSession, "session")
		if err != nil {
			s.Error(w, r, err)
			return
		}
		q := newQuery(r)
		page := q.page()
		if err := q.err(); err != nil {
			s.Error(w, r, err)
			return
		}
		list, next, err := s.store.ListMessages(r.Context(), UserFrom(r.Context()).ID, id, page)
		if err != nil {
			s.Error(w, r, orNotFound(err, "session"))
			return
		}
		if list == nil {
			list = []*coachd.Message{}
		}
		s.encode(w, r, http.StatusOK, response{Messages: list, NextCursor: next})
	})
}

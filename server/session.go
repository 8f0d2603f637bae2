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
		servePage(s, w, r, func(p coachd.Page) ([]*coachd.Session, string, error) {
			return s.store.ListSessions(r.Context(), UserFrom(r.Context()).ID, p)
		}, func(list []*coachd.Session, next string) any { return response{list, next} })
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

// runningTurn is the session's turn still running, in GET
// /v1/sessions/{id}: a client that lost the turn's stream (a reloaded
// page) follows it again from LastEventID, and MessageID is the first
// reply message of the turn, so that messages from it on, already in the
// history, are not drawn twice.
type runningTurn struct {
	Turn        int64  `json:"turn"`
	MessageID   string `json:"message_id,omitempty"`
	LastEventID string `json:"last_event_id"`
}

func (s *Server) handleSessionGet() http.Handler {
	type response struct {
		*coachd.Session
		RunningTurn *runningTurn `json:"running_turn,omitempty"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sess, err := s.findSession(r)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		run, err := s.runningTurn(r.Context(), sess)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		s.encode(w, r, http.StatusOK, response{Session: sess, RunningTurn: run})
	})
}

// runningTurn reports the session's turn in the event log that has not
// ended; nil when there is none.
func (s *Server) runningTurn(ctx context.Context, sess *coachd.Session) (*runningTurn, error) {
	tl, err := s.store.LatestTurn(ctx, sess.UserID, sess.ID)
	if err != nil || tl.Turn == 0 || tl.Ended {
		return nil, orNotFound(err, "session")
	}
	from := coachd.EventID{Turn: tl.Turn}
	run := &runningTurn{Turn: tl.Turn, LastEventID: from.String()}
	// The turn's first event (turn_started) names its reply; there is
	// none yet when the turn has only been admitted.
	ev, ok, err := s.hub.Opening(ctx, sess.UserID, sess.ID, tl.Turn)
	if err != nil {
		return nil, err
	}
	if ok && ev.Type == coachd.EventTurnStarted {
		run.MessageID = ev.MessageID
	}
	return run, nil
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
		PrevCursor string            `json:"prev_cursor,omitempty"` // a page ?before=: the one before it
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := pathID(r, coachd.PrefixSession, "session")
		if err != nil {
			s.Error(w, r, err)
			return
		}
		q := newQuery(r)
		page := q.page()
		q.before(&page)
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
		res := response{Messages: list, NextCursor: next}
		if page.Before != "" {
			res = response{Messages: list, PrevCursor: next}
		}
		s.encode(w, r, http.StatusOK, res)
	})
}

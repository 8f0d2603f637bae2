package server

import (
	"context"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/coachd/coachd"
)

// UserNameMax bounds user names.
const UserNameMax = 100

type userCreateRequest struct {
	Name        string `json:"name"`
	TokenBudget *int64 `json:"token_budget"`
}

func (req userCreateRequest) Valid(context.Context) []coachd.FieldError {
	var errs []coachd.FieldError
	errs = appendNameErrs(errs, req.Name)
	return appendBudgetErrs(errs, req.TokenBudget)
}

type userUpdateRequest struct {
	Name        *string `json:"name"`
	TokenBudget *int64  `json:"token_budget"`

	RateLimit       *string `json:"rate_limit"`       // "20/60s", "off", "" for the server default
	MonthlyMessages *int64  `json:"monthly_messages"` // 0 no limit, -1 the server default
}

func (req userUpdateRequest) Valid(context.Context) []coachd.FieldError {
	if req.Name == nil && req.TokenBudget == nil && req.RateLimit == nil && req.MonthlyMessages == nil {
		return []coachd.FieldError{{Field: "", Message: "nothing to update: send name, token_budget, rate_limit or monthly_messages", Code: "required"}}
	}
	errs := limitErrs(nil, req.RateLimit, req.MonthlyMessages)
	if req.Name != nil {
		errs = appendNameErrs(errs, *req.Name)
	}
	return appendBudgetErrs(errs, req.TokenBudget)
}

func appendNameErrs(errs []coachd.FieldError, name string) []coachd.FieldError {
	if n := utf8.RuneCountInString(name); n < 1 || n > UserNameMax || strings.TrimSpace(name) == "" {
		errs = append(errs, coachd.FieldError{Field: "name", Message: "must be 1 to 100 characters, not only spaces", Code: "length"})
	}
	return errs
}

func appendBudgetErrs(errs []coachd.FieldError, budget *int64) []coachd.FieldError {
	if budget != nil && *budget < 0 {
		errs = append(errs, coachd.FieldError{Field: "token_budget", Message: "must be 0 or more", Code: "range"})
	}
	return errs
}

// userCreated is a new user with its API key: the only time the key is
// shown.
type userCreated struct {
	*coachd.User
	APIKey string `json:"api_key"`
}

func (s *Server) handleUserCreate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := decode[userCreateRequest](r)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		u := &coachd.User{Name: req.Name, TokenBudget: s.limits.DefaultBudget}
		if req.TokenBudget != nil {
			u.TokenBudget = *req.TokenBudget
		}
		key, err := CreateUser(r.Context(), s.store, u)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		s.encode(w, r, http.StatusCreated, userCreated{User: u, APIKey: key})
	})
}

// CreateUser stores u in store with a fresh API key and returns the key;
// the CLI uses it too, so keys are made in one place.
func CreateUser(ctx context.Context, store coachd.UserService, u *coachd.User) (string, error) {
	key := NewAPIKey()
	if err := store.CreateUser(ctx, u, HashAPIKey(key)); err != nil {
		return "", err
	}
	return key, nil
}

func (s *Server) handleUserGet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := pathID(r, coachd.PrefixUser, "user")
		if err != nil {
			s.Error(w, r, err)
			return
		}
		u, err := s.store.FindUserByID(r.Context(), id)
		if err != nil {
			s.Error(w, r, orNotFound(err, "user"))
			return
		}
		s.encode(w, r, http.StatusOK, u)
	})
}

func (s *Server) handleUserUpdate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := pathID(r, coachd.PrefixUser, "user")
		if err != nil {
			s.Error(w, r, err)
			return
		}
		req, err := decode[userUpdateRequest](r)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		u, err := s.store.UpdateUser(r.Context(), id, coachd.UserUpdate{Name: req.Name, TokenBudget: req.TokenBudget,
			RateLimit: req.RateLimit, MonthlyMessages: req.MonthlyMessages})
		if err != nil {
			s.Error(w, r, orNotFound(err, "user"))
			return
		}
		s.encode(w, r, http.StatusOK, u)
	})
}

func (s *Server) handleMe() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		me, err := s.me(r)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		s.encode(w, r, http.StatusOK, me)
	})
}

// handleUserList is GET /v1/users (admin): users a page at a time.
func (s *Server) handleUserList() http.Handler {
	type response struct {
		Users      []*coachd.User `json:"users"`
		NextCursor string         `json:"next_cursor"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		servePage(s, w, r, func(p coachd.Page) ([]*coachd.User, string, error) {
			return s.store.ListUsers(r.Context(), p)
		}, func(list []*coachd.User, next string) any { return response{list, next} })
	})
}

// handleUserDelete is DELETE /v1/users/{id} (admin): the user and all of
// their data (sessions, messages, notes, files, budget ledger, reviews)
// are removed.
func (s *Server) handleUserDelete() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := pathID(r, coachd.PrefixUser, "user")
		if err != nil {
			s.Error(w, r, err)
			return
		}
		if err := s.store.DeleteUser(r.Context(), id); err != nil {
			s.Error(w, r, orNotFound(err, "user"))
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// handleUserKey is POST /v1/users/{id}/key (rotate: a new key, shown once;
// the old one stops working) and DELETE (revoke: no key works until the
// next rotation).
func (s *Server) handleUserKey(rotate bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := pathID(r, coachd.PrefixUser, "user")
		if err != nil {
			s.Error(w, r, err)
			return
		}
		// Revoking stores the hash of a key nobody was given, marked
		// (User.Revoked): a user signing in with tokens is refused too.
		key := NewAPIKey()
		hash := HashAPIKey(key)
		if !rotate {
			hash = coachd.RevokedKeyPrefix + hash
		}
		if err := s.store.SetUserKey(r.Context(), id, hash); err != nil {
			s.Error(w, r, orNotFound(err, "user"))
			return
		}
		if !rotate {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		s.encode(w, r, http.StatusOK, map[string]string{"id": id, "api_key": key})
	})
}

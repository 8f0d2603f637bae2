package server

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/coachd/coachd"
)

// handleHealthz answers {"status":"ok"} when the database answers a ping.
func (s *Server) handleHealthz() http.Handler {
	type response struct {
		Status string `json:"status"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.ping != nil {
			ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
			defer cancel()
			if err := s.ping(ctx); err != nil {
				s.log(r).Error("health check: database ping failed", "err", err)
				s.encode(w, r, http.StatusServiceUnavailable, response{Status: "unavailable"})
				return
			}
		}
		s.encode(w, r, http.StatusOK, response{Status: "ok"})
	})
}

// handleReadyz answers whether this instance can serve: the database
// answers, its schema is this binary's (every migration applied, none
// newer), and the pack loaded (serve refuses to start otherwise). 503 with
// the failing check when not.
func (s *Server) handleReadyz() http.Handler {
	type response struct {
		Status string            `json:"status"`
		Checks map[string]string `json:"checks"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		out := response{Status: "ready", Checks: map[string]string{"database": "ok", "migrations": "ok", "pack": "none"}}
		if s.pack != nil {
			out.Checks["pack"] = fmt.Sprintf("%d agents", len(s.pack.Agents))
		}
		status := http.StatusOK
		fail := func(check string, err error) {
			out.Status, out.Checks[check], status = "unavailable", coachd.ErrorMessage(err), http.StatusServiceUnavailable
			s.log(r).Warn("not ready", "check", check, "err", err)
		}
		if s.ping != nil {
			if err := s.ping(ctx); err != nil {
				fail("database", err)
			}
		}
		if s.ready != nil && status == http.StatusOK {
			if err := s.ready(ctx); err != nil {
				fail("migrations", err)
			}
		} else if s.ready != nil {
			out.Checks["migrations"] = "not checked"
		}
		s.encode(w, r, status, out)
	})
}

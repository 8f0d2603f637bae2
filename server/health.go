package server

import (
	"context"
	"net/http"
	"time"
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

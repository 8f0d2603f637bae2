package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestStopNoTurn: POST /v1/sessions/{id}/stop on the user's own session
// that runs no turn (it ended a moment before, as a Stop pressed late
// finds it) is a 404 that says no turn runs there, not that the session
// is not found: a client told so drops a conversation that exists. A
// session that is not the user's is still "session not found". A review
// found both answered "session not found".
func TestStopNoTurn(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		e := MustEnv(t, dsn)
		sess := e.MustSession(e.alice)
		message := func(r response) string {
			var b struct {
				Error struct{ Code, Message string }
			}
			json.Unmarshal(r.body, &b)
			return b.Error.Code + ": " + b.Error.Message
		}
		t.Run("OK", func(t *testing.T) {
			r := e.do(request{method: http.MethodPost, path: "/v1/sessions/" + sess.ID + "/stop", key: e.alice.key})
			if got := message(r); r.status != http.StatusNotFound || !strings.Contains(got, "no turn is running") {
				t.Errorf("stop with no turn on alice's session: %d %q, want 404 saying no turn is running", r.status, got)
			}
		})
		t.Run("ErrOtherUsers", func(t *testing.T) {
			r := e.do(request{method: http.MethodPost, path: "/v1/sessions/" + sess.ID + "/stop", key: e.bob.key})
			if got, want := message(r), "not_found: session not found"; r.status != http.StatusNotFound || got != want {
				t.Errorf("bob stopping alice's session: %d %q, want 404 %q", r.status, got, want)
			}
		})
	})
}

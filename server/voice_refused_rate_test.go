package server_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/server"
)

// TestVoiceRefusedNotCounted: a mint or a speech request refused (no
// budget left, another user's session) reaches no provider and is not
// counted against the user's voice or speech rate, as a refused
// transcript is not: once the budget is topped up, the next one goes
// through. Both were counted before the budget was checked, so a user
// refused for budget found their rate used up too.
func TestVoiceRefusedNotCounted(t *testing.T) {
	e := mustVoiceEnv(t, server.Limits{Rate: coachd.RateLimit{N: 1, Per: time.Hour}}, voiceKey)
	ctx := context.Background()
	carol := e.MustUser("carol")
	setBudget := func(n int64) {
		t.Helper()
		if _, err := e.admin.UpdateUser(ctx, carol.ID, coachd.UserUpdate{TokenBudget: &n}); err != nil {
			t.Fatal(err)
		}
	}
	setBudget(0)
	bobs, err := e.bob.c.CreateSession(ctx, "", "bob's")
	if err != nil {
		t.Fatal(err)
	}
	// The mint's body and the speech request's, with extra fields.
	bodies := map[string]string{"/v1/realtime/session": `{%s}`, "/v1/tts": `{"text":"hi"%s}`}
	for path, body := range bodies {
		for range 2 {
			if r := e.post(carol.key, path, fmt.Sprintf(body, ""), nil, nil); r.status != http.StatusPaymentRequired || r.errorCode() != coachd.EBUDGET {
				t.Fatalf("%s without budget = %d %s, want 402", path, r.status, r.body)
			}
		}
	}
	setBudget(100000)
	for path, body := range bodies {
		other := `"session_id":"` + bobs.ID + `"`
		if path == "/v1/tts" {
			other = "," + other
		}
		if r := e.post(carol.key, path, fmt.Sprintf(body, other), nil, nil); r.status != http.StatusNotFound {
			t.Fatalf("%s on another user's session = %d %s, want 404", path, r.status, r.body)
		}
	}
	for path, body := range bodies {
		if r := e.post(carol.key, path, fmt.Sprintf(body, ""), nil, nil); r.status != http.StatusOK {
			t.Fatalf("%s after the refusals = %d %s, want 200", path, r.status, r.body)
		}
		if r := e.post(carol.key, path, fmt.Sprintf(body, ""), nil, nil); r.status != http.StatusTooManyRequests || r.errorCode() != coachd.ERATELIMITED {
			t.Fatalf("%s past the rate = %d %s, want 429", path, r.status, r.body)
		}
	}
}

package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/server"
)

// TestVoiceMintNotAMessage: minting a voice secret sends the coach no
// message, so it is not counted against the monthly message allowance
// nor the turn rate: a driver who opens voice mode and says nothing still
// has every message of the month. Mints count in a bucket of their own
// at the user's rate (TestVoiceRateLimit). Each mint used up a monthly
// message and a turn.
func TestVoiceMintNotAMessage(t *testing.T) {
	t.Run("Monthly", func(t *testing.T) {
		e := mustVoiceEnv(t, server.Limits{MonthlyMessages: 1}, voiceKey)
		for i := range 3 {
			if r := e.post(e.alice.key, "/v1/realtime/session", `{}`, nil, nil); r.status != http.StatusOK {
				t.Fatalf("mint %d = %d %s", i, r.status, r.body)
			}
		}
		if r := e.post(e.alice.key, "/v1/chat/preflight", `{"message":"hi"}`, nil, nil); r.status != http.StatusOK {
			t.Fatalf("first message after the mints = %d %s", r.status, r.body)
		}
		// The monthly cap's refusal on the preflight: a 200 with nothing
		// held and the limit's error (seed 000 answers its own 402).
		if r := e.post(e.alice.key, "/v1/chat/preflight", `{"message":"hi"}`, nil, nil); r.status != http.StatusOK || r.errorCode() != coachd.ERATELIMITED ||
			!strings.Contains(string(r.body), `"reservation_id":""`) {
			t.Fatalf("second message = %d %s, want the monthly limit's refusal", r.status, r.body)
		}
	})
	t.Run("TurnRate", func(t *testing.T) {
		e := mustVoiceEnv(t, server.Limits{Rate: coachd.RateLimit{N: 1, Per: time.Hour}}, voiceKey)
		if r := e.post(e.alice.key, "/v1/realtime/token", `{}`, nil, nil); r.status != http.StatusOK {
			t.Fatalf("mint = %d %s", r.status, r.body)
		}
		if r := e.post(e.alice.key, "/v1/chat/preflight", `{"message":"hi"}`, nil, nil); r.status != http.StatusOK {
			t.Fatalf("turn after the mint = %d %s", r.status, r.body)
		}
		if r := e.post(e.alice.key, "/v1/realtime/token", `{}`, nil, nil); r.status != http.StatusTooManyRequests || r.errorCode() != coachd.ERATELIMITED {
			t.Fatalf("second mint = %d %s, want 429 (its own bucket, at the user's rate)", r.status, r.body)
		}
	})
}

package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/server"
)

// TestVoiceProviderFailureNotCounted: a mint or a speech request the
// provider fails (down, 5xx, busy) hands the user nothing, and does not
// use up their voice or speech rate: with a rate of one an hour, the
// retry once the provider is back goes through, and only a request that
// was served is counted. Each failure cost a slot, so one provider blip
// locked a driver out of voice for the rest of the window.
func TestVoiceProviderFailureNotCounted(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		e := mustVoiceEnvOn(t, dsn, server.Limits{Rate: coachd.RateLimit{N: 1, Per: time.Hour}}, voiceKey)
		key := e.alice.key
		bodies := map[string]string{"/v1/realtime/session": `{}`, "/v1/tts": `{"text":"Airport rush after five."}`}
		for path, body := range bodies {
			for _, status := range []int{http.StatusInternalServerError, http.StatusServiceUnavailable, http.StatusTooManyRequests} {
				e.provider.Fail(status, "down")
				if r := e.post(key, path, body, nil, nil); r.status/100 != 5 || r.errorCode() == coachd.ERATELIMITED {
					t.Fatalf("%s with the provider at %d = %d %s, want a 5xx", path, status, r.status, r.body)
				}
			}
			if r := e.post(key, path, body, nil, nil); r.status != http.StatusOK {
				t.Fatalf("%s once the provider is back = %d %s, want 200", path, r.status, r.body)
			}
			if r := e.post(key, path, body, nil, nil); r.status != http.StatusTooManyRequests || r.errorCode() != coachd.ERATELIMITED {
				t.Fatalf("%s past the rate = %d %s, want 429", path, r.status, r.body)
			}
		}
		// A provider that cannot be reached at all: bob's one slot stays his.
		e.provider.Close()
		for path, body := range bodies {
			for i := range 2 {
				if r := e.post(e.bob.key, path, body, nil, nil); r.status/100 != 5 || r.errorCode() == coachd.ERATELIMITED {
					t.Fatalf("%s %d with the provider gone = %d %s, want a 5xx", path, i, r.status, r.body)
				}
			}
		}
	})
}

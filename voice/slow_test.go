package voice_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/voice"
)

// TestMintSlowBody: a provider that sends its headers and then stalls
// past the timeout did not answer in time (timeout, 504, worth a retry);
// it was reported as an unreadable secret (api_error, 502).
func TestMintSlowBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(`{"value":"ek_`))
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the rest never comes
	}))
	t.Cleanup(srv.Close)
	c := voice.New(voice.Config{APIKey: key, BaseURL: srv.URL, HTTPClient: srv.Client(), Timeout: 100 * time.Millisecond})
	_, err := c.Mint(context.Background(), voice.SessionRequest{})
	if coachd.ErrorCode(err) != coachd.ETIMEOUT {
		t.Fatalf("err %v, want %s", err, coachd.ETIMEOUT)
	}
}

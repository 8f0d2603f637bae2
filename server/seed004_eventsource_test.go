package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSeed004EventSource plays seed 004's EventSource client: it opens
// the stream endpoint (a GET: EventSource sends nothing else) with its
// Authorization header, and its error listener parses e.data and shows
// the message. A status other than 200 reaches that listener with no
// data, so whatever coachd answers must be a 200 stream whose error event
// carries {type, message}, or the user is shown nothing.
func TestSeed004EventSource(t *testing.T) {
	node, dir := needSSEClient(t)
	e := MustChatEnv(t, nil)
	shown := func(t *testing.T, key string) string {
		t.Helper()
		cmd := exec.Command(node, filepath.Join(dir, "seed004.mjs"), e.url+"/v1/chat/stream", key)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("seed 004's client: %v\n%s", err, out)
		}
		var r struct{ Shown string }
		if json.Unmarshal(out, &r) != nil || r.Shown == "" {
			t.Fatalf("seed 004's client showed nothing: %s", out)
		}
		return r.Shown
	}

	t.Run("OK", func(t *testing.T) {
		if got := shown(t, e.alice.key); !strings.Contains(got, "POST /v1/chat/stream") {
			t.Errorf("shown %q, want it to say how a turn is started", got)
		}
	})
	t.Run("ErrUnauthorized", func(t *testing.T) {
		if got := shown(t, "ck_wrong"); !strings.Contains(got, "API key") {
			t.Errorf("shown %q, want the key refused", got)
		}
	})
	t.Run("RetryHint", func(t *testing.T) {
		// EventSource reopens a 200 stream that ends: the answer asks it
		// to wait, not to come back every three seconds.
		req, _ := http.NewRequest("GET", e.url+"/v1/chat/stream", nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Authorization", "Bearer "+e.alice.key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), "retry: 3600000\n") ||
			!strings.Contains(string(body), "event: error\ndata: {\"type\":\"invalid_request\"") {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
	})
	t.Run("NotEventSource", func(t *testing.T) {
		// Anyone else still gets the 405.
		req, _ := http.NewRequest("GET", e.url+"/v1/chat/stream", nil)
		req.Header.Set("Authorization", "Bearer "+e.alice.key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") == "" {
			t.Fatalf("%d, Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
		}
	})
}

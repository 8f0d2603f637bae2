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

// TestStreamTokenEventSource plays an EventSource following a session
// with its stream_url (GET /v1/sessions/{id}/stream?token=…), with seed
// 004's error listener: showError(JSON.parse(e.data).message). A status
// other than 200 reaches that listener with no data, so a token that
// expired (or never was, or names another session) must come as a 200
// stream whose error event says why, or the user is shown nothing.
// Clients that send their key and read statuses (client.Resume, the
// browser UI) keep them.
func TestStreamTokenEventSource(t *testing.T) {
	node, dir := needSSEClient(t)
	e := MustChatEnv(t, nil)
	sess, other := e.MustSession(e.alice), e.MustSession(e.alice)
	token, _ := e.mintStreamToken(t, e.alice.key, sess.ID)
	shown := func(t *testing.T, path string) string {
		t.Helper()
		cmd := exec.Command(node, filepath.Join(dir, "streamtoken.mjs"), e.url+path)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the EventSource client: %v\n%s", err, out)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			var r struct{ Shown string }
			if json.Unmarshal([]byte(line), &r) == nil && r.Shown != "" {
				return r.Shown
			}
		}
		t.Fatalf("the EventSource client showed nothing: %s", out)
		return ""
	}

	t.Run("ErrTokenUnknown", func(t *testing.T) {
		if got := shown(t, "/v1/sessions/"+sess.ID+"/stream?token=st_forged"); !strings.Contains(got, "stream token") {
			t.Errorf("shown %q, want the token refused", got)
		}
	})
	t.Run("ErrTokenOtherSession", func(t *testing.T) {
		if got := shown(t, "/v1/sessions/"+other.ID+"/stream?token="+token); !strings.Contains(got, "stream token") {
			t.Errorf("shown %q, want the token refused", got)
		}
	})
	t.Run("ErrSessionMalformed", func(t *testing.T) {
		if got := shown(t, "/v1/sessions/sess_nope/stream?token="+token); !strings.Contains(got, "not found") {
			t.Errorf("shown %q, want the session not found", got)
		}
	})
	t.Run("ErrLastEventID", func(t *testing.T) {
		if got := shown(t, "/v1/sessions/"+sess.ID+"/stream?last_event_id=x&token="+token); !strings.Contains(got, "last_event_id") {
			t.Errorf("shown %q, want last_event_id named", got)
		}
	})
	t.Run("ErrSessionDeleted", func(t *testing.T) {
		gone := e.MustSession(e.alice)
		_, streamURL := e.mintStreamToken(t, e.alice.key, gone.ID)
		if r := e.do(request{method: "DELETE", path: "/v1/sessions/" + gone.ID, key: e.alice.key}); r.status != 204 {
			t.Fatalf("delete: %d %s", r.status, r.body)
		}
		if got := shown(t, streamURL); got == "" {
			t.Error("shown nothing")
		}
	})
	get := func(t *testing.T, path, key, accept string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", e.url+path, nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(body)
	}
	t.Run("RetryHint", func(t *testing.T) {
		// EventSource reopens a 200 stream that ends: the answer asks it
		// to wait an hour, not to come back every few seconds.
		resp, body := get(t, "/v1/sessions/"+sess.ID+"/stream?token=st_forged", "", "text/event-stream")
		if resp.StatusCode != 200 || !strings.HasPrefix(body, "retry: 3600000\n") ||
			!strings.Contains(body, "event: error\ndata: {\"type\":\"unauthorized\"") {
			t.Fatalf("%d %q", resp.StatusCode, body)
		}
	})
	t.Run("StatusesKept", func(t *testing.T) {
		// Without Accept: text/event-stream the token's refusal keeps its
		// 401 (TestStreamToken), and a key's refusals keep theirs even
		// when the client accepts only a stream (client.Resume, the UI).
		if resp, body := get(t, "/v1/sessions/"+sess.ID+"/stream?token=st_forged", "", ""); resp.StatusCode != 401 {
			t.Errorf("no Accept: %d %s", resp.StatusCode, body)
		}
		if resp, body := get(t, "/v1/sessions/"+sess.ID+"/stream", e.bob.key, "text/event-stream"); resp.StatusCode != 404 {
			t.Errorf("bob's key on alice's session: %d %s", resp.StatusCode, body)
		}
		if resp, body := get(t, "/v1/sessions/"+sess.ID+"/stream", "ck_wrong", "text/event-stream"); resp.StatusCode != 401 {
			t.Errorf("a wrong key: %d %s", resp.StatusCode, body)
		}
	})
}

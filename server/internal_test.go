package server_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func mustUnmarshal(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("unmarshal %s: %v", b, err)
	}
}

// TestInternalError closes the database under a running server: the caller
// gets a generic 500 with the request id, the log gets the cause with the
// same id, and no secret reaches either.
func TestInternalError(t *testing.T) {
	e := MustEnv(t, filepath.Join(t.TempDir(), "coachd.db"))
	if err := e.db.Close(); err != nil {
		t.Fatal(err)
	}
	for _, req := range []request{
		{method: "GET", path: "/v1/me", key: e.alice.key},
		{method: "POST", path: "/v1/users", key: adminKey, body: `{"name":"x"}`},
	} {
		resp := e.do(req)
		if resp.status != 500 || resp.errorCode() != "internal" {
			t.Fatalf("%s %s: %d %s, want 500 internal", req.method, req.path, resp.status, resp.body)
		}
		id := resp.header.Get("X-Request-Id")
		if id == "" {
			t.Fatal("no X-Request-Id")
		}
		var body struct{ Error struct{ Message string } }
		mustUnmarshal(t, resp.body, &body)
		if !strings.Contains(body.Error.Message, id) || strings.Contains(body.Error.Message, "sql") || strings.Contains(body.Error.Message, "closed") {
			t.Errorf("message %q: want a generic text quoting %s", body.Error.Message, id)
		}
		logs := e.logs.String()
		var found bool
		for _, line := range strings.Split(logs, "\n") {
			if strings.Contains(line, "internal error") && strings.Contains(line, "request_id="+id) && strings.Contains(line, "closed") {
				found = true
			}
		}
		if !found {
			t.Errorf("no internal error line with request_id=%s and its cause in:\n%s", id, logs)
		}
	}
	logs := e.logs.String()
	for _, secret := range []string{e.alice.key, e.bob.key, adminKey} {
		if strings.Contains(logs, secret) {
			t.Errorf("a secret is in the log:\n%s", logs)
		}
	}
	if resp := e.do(request{method: "GET", path: "/healthz"}); resp.status != 503 {
		t.Errorf("healthz with a closed database: %d %s, want 503", resp.status, resp.body)
	}
}

// TestRequestID keeps a caller's plain X-Request-Id and replaces others.
func TestRequestID(t *testing.T) {
	e := MustEnv(t, filepath.Join(t.TempDir(), "coachd.db"))
	resp := e.do(request{method: "GET", path: "/healthz", header: map[string]string{"X-Request-Id": "trace-42"}})
	if got := resp.header.Get("X-Request-Id"); got != "trace-42" {
		t.Errorf("X-Request-Id = %q, want trace-42", got)
	}
	resp = e.do(request{method: "GET", path: "/healthz", header: map[string]string{"X-Request-Id": "bad id; drop"}})
	if got := resp.header.Get("X-Request-Id"); !strings.HasPrefix(got, "req_") {
		t.Errorf("X-Request-Id = %q, want a fresh req_ id", got)
	}
}

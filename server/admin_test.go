package server_test

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// TestAdminUsers: list, unique names, rotate and revoke keys, delete.
func TestAdminUsers(t *testing.T) {
	e := MustEnv(t, filepath.Join(t.TempDir(), "c.db"))
	admin := func(method, path, body string) response {
		return e.do(request{method: method, path: path, key: adminKey, body: body})
	}
	var list struct {
		Users []struct{ ID, Name string }
	}
	if r := admin("GET", "/v1/users?limit=10", ""); r.status != 200 || json.Unmarshal(r.body, &list) != nil || len(list.Users) != 2 {
		t.Fatalf("list %d %s", r.status, r.body)
	}
	if r := e.do(request{method: "GET", path: "/v1/users", key: e.alice.key}); r.status != 403 {
		t.Fatalf("a user listed users: %d", r.status)
	}
	if r := admin("POST", "/v1/users", `{"name":"alice"}`); r.status != 409 {
		t.Fatalf("duplicate name: %d %s", r.status, r.body)
	}
	var rotated struct {
		Key string `json:"api_key"`
	}
	if r := admin("POST", "/v1/users/"+e.alice.ID+"/key", ""); r.status != 200 || json.Unmarshal(r.body, &rotated) != nil || rotated.Key == "" {
		t.Fatalf("rotate %d %s", r.status, r.body)
	}
	if r := e.do(request{method: "GET", path: "/v1/me", key: e.alice.key}); r.status != 401 {
		t.Fatalf("the old key still works: %d", r.status)
	}
	if r := e.do(request{method: "GET", path: "/v1/me", key: rotated.Key}); r.status != 200 {
		t.Fatalf("the new key: %d", r.status)
	}
	if r := admin("DELETE", "/v1/users/"+e.alice.ID+"/key", ""); r.status != 204 {
		t.Fatalf("revoke %d", r.status)
	}
	if r := e.do(request{method: "GET", path: "/v1/me", key: rotated.Key}); r.status != 401 {
		t.Fatalf("a revoked key works: %d", r.status)
	}
	if r := admin("DELETE", "/v1/users/"+e.bob.ID, ""); r.status != 204 {
		t.Fatalf("delete %d %s", r.status, r.body)
	}
	if r := admin("GET", "/v1/users/"+e.bob.ID, ""); r.status != 404 {
		t.Fatalf("deleted user: %d", r.status)
	}
	if r := admin("DELETE", "/v1/users/"+e.bob.ID, ""); r.status != 404 {
		t.Fatalf("second delete: %d", r.status)
	}
}

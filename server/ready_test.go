package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/internal/syncbuf"
	"github.com/coachd/coachd/server"
)

// TestReadyz: ready only when the database answers and its schema is this
// binary's; probes are logged at debug, not info.
func TestReadyz(t *testing.T) {
	db := mustDB(t, filepath.Join(t.TempDir(), "c.db"), nil)
	var schemaErr error
	logs := &syncbuf.Buffer{}
	srv := httptest.NewServer(server.New(server.Deps{Store: db, Ping: db.SQL().PingContext,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})),
		Ready:  func(ctx context.Context) error { return errors.Join(schemaErr, db.CheckMigrations(ctx)) }}))
	defer srv.Close()
	get := func(path string) (int, map[string]any) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	if st, out := get("/readyz"); st != 200 || out["status"] != "ready" {
		t.Fatalf("ready: %d %v", st, out)
	}
	schemaErr = coachd.Errorf(coachd.ECONFLICT, "2 migration(s) not applied")
	if st, out := get("/readyz"); st != 503 || !strings.Contains(out["checks"].(map[string]any)["migrations"].(string), "not applied") {
		t.Fatalf("not ready: %d %v", st, out)
	}
	if st, _ := get("/healthz"); st != 200 {
		t.Fatalf("healthz %d", st)
	}
	if strings.Contains(logs.String(), "path=/healthz") || strings.Contains(logs.String(), "path=/readyz status=200") {
		t.Fatalf("probes logged at info:\n%s", logs)
	}
	if !strings.Contains(logs.String(), "path=/readyz status=503") && !strings.Contains(logs.String(), "not ready") {
		t.Fatalf("a failing probe is not logged:\n%s", logs)
	}
}

// TestReadyzDeadDatabase: with the database gone, /readyz answered 503
// with "migrations": "ok", a check it had not run (it cannot, without
// the database): an operator reading the body took the schema for
// checked. A check not run now says so.
func TestReadyzDeadDatabase(t *testing.T) {
	db := mustDB(t, filepath.Join(t.TempDir(), "c.db"), nil)
	srv := httptest.NewServer(server.New(server.Deps{Store: db, Ping: db.SQL().PingContext, Ready: db.CheckMigrations,
		Logger: slog.New(slog.NewTextHandler(&syncbuf.Buffer{}, nil))}))
	defer srv.Close()
	db.Close()
	resp, err := http.Get(srv.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Status string            `json:"status"`
		Checks map[string]string `json:"checks"`
	}
	json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != 503 || out.Checks["database"] == "ok" {
		t.Fatalf("readyz with the database closed: %d %+v", resp.StatusCode, out)
	}
	if out.Checks["migrations"] == "ok" {
		t.Errorf("migrations reported ok, unchecked: %+v", out)
	}
}

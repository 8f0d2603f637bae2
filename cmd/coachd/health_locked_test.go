package main

import (
	"context"
	"database/sql"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// TestHealthzWhileDatabaseLocked: another process holds the SQLite
// file's write lock (a sqlite3 shell in a transaction, a long
// migration) and a write of coachd's waits for it. /healthz, the
// liveness probe, pinged through the one writer connection that write
// holds, so it failed after its 2 s and the orchestrator restarted a
// process that restarting does not help. It pings the readers: the
// database still answers.
func TestHealthzWhileDatabaseLocked(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "coachd.db")
	key := mustCreateUser(t, dbPath, "frank")
	p := MustServe(t, map[string]string{"COACHD_ADDR": "127.0.0.1:0"}, "--db", dbPath, "--demo")

	other, err := sql.Open("sqlite", "file:"+dbPath+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ctx := context.Background()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		req, _ := http.NewRequest(http.MethodPost, p.url+"/v1/sessions", strings.NewReader(`{"title":"t"}`))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
		}
	}()
	for i := 0; i < 2; i++ {
		res, err := http.Get(p.url + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("/healthz %d while another process holds the write lock: %d, want 200", i+1, res.StatusCode)
		}
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	<-wrote
}

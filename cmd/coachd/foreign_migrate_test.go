package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/coachd/coachd/sqlstore/pgtest"
)

// TestForeignDatabaseNotMigrated: serve and migrate pointed at another
// application's database (a --db typo, the app's own DATABASE_URL)
// installed coachd's tables beside its tables, and served. They refuse
// it, saying it is not a coachd database, and leave it as it was;
// migrate --share-db installs them for an operator who means it, after
// which serve starts on it. On PostgreSQL a schema of coachd's own in
// the same database (search_path) is not refused.
func TestForeignDatabaseNotMigrated(t *testing.T) {
	ctx := context.Background()
	for _, c := range otherAppDatabases(t, `CREATE TABLE invoices (id INTEGER PRIMARY KEY)`) {
		tables := func() int {
			t.Helper()
			q := `SELECT count(*) FROM sqlite_master WHERE type = 'table'`
			if c.driver == "pgx" {
				q = `SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'`
			}
			var n int
			if err := c.raw.QueryRowContext(ctx, q).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		for _, cmd := range []string{"migrate", "serve"} {
			out, err := runUntilListening(t, cmd, "--db", c.dsn)
			if err == nil || errors.Is(err, errUsage) || !strings.Contains(err.Error(), "not a coachd database") || !strings.Contains(err.Error(), "--share-db") {
				t.Errorf("%s: %s on another application's database: %v\n%s; want a refusal saying it is not a coachd database and naming --share-db", c.driver, cmd, err, out)
			}
			if n := tables(); n != 1 {
				t.Errorf("%s: %s left %d tables in the other application's database, want its 1", c.driver, cmd, n)
			}
		}
		if out, err := runUntilListening(t, "migrate", "--db", c.dsn, "--share-db"); err != nil {
			t.Fatalf("%s: migrate --share-db: %v\n%s", c.driver, err, out)
		}
		if out, err := runUntilListening(t, "serve", "--db", c.dsn); err != nil {
			t.Errorf("%s: serve after migrate --share-db: %v\n%s", c.driver, err, out)
		}
	}
	t.Run("PostgresSchema", func(t *testing.T) {
		dsn := pgtest.NewDatabase(t)
		raw, err := sql.Open("pgx", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		if _, err := raw.ExecContext(ctx, `CREATE TABLE invoices (id INTEGER PRIMARY KEY); CREATE SCHEMA coachd`); err != nil {
			t.Fatal(err)
		}
		if out, err := runUntilListening(t, "serve", "--db", dsn+"&search_path=coachd"); err != nil {
			t.Errorf("serve in a schema of its own: %v\n%s", err, out)
		}
	})
}

// runUntilListening runs a coachd command; serve is stopped once it
// listens (a nil error: it started). It returns stdout and stderr.
func runUntilListening(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout := &cancelOn{s: "listening", cancel: cancel}
	var stderr syncBuffer
	err := run(ctx, append([]string{"coachd"}, args...), getenvFrom(map[string]string{"COACHD_ADDR": "127.0.0.1:0"}), stdout, &stderr)
	return stdout.String() + stderr.String(), err
}

// cancelOn is a writer that calls cancel once what was written holds s.
type cancelOn struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	s      string
	cancel context.CancelFunc
}

func (w *cancelOn) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.s) {
		w.cancel()
	}
	return len(p), nil
}

func (w *cancelOn) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/sqlstore"
)

// Issue 16's CLI safety: read-only commands never create a database, a
// newer schema is refused, -h works on every subcommand, replay files are
// checked at start, users create --json prints id and key.
func TestCLISafety(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	t.Run("ReadOnlyNeedsDatabase", func(t *testing.T) {
		for _, cmd := range [][]string{{"doctor"}, {"users", "list"}} {
			missing := filepath.Join(dir, "typo.db")
			out := &syncBuffer{}
			err := run(ctx, append(append([]string{"coachd"}, cmd...), "--db", missing), getenvFrom(nil), out, out)
			if err == nil || !strings.Contains(err.Error(), "does not exist") {
				t.Errorf("%v: %v\n%s", cmd, err, out)
			}
			if _, err := os.Stat(missing); err == nil {
				t.Errorf("%v created %s", cmd, missing)
			}
		}
	})
	t.Run("NewerSchemaRefused", func(t *testing.T) {
		dbPath := filepath.Join(dir, "new.db")
		out := &syncBuffer{}
		if err := run(ctx, []string{"coachd", "migrate", "--db", dbPath}, getenvFrom(nil), out, out); err != nil {
			t.Fatal(err)
		}
		db, err := sqlstore.Open(ctx, dbPath, nil)
		if err != nil {
			t.Fatal(err)
		}
		db.SQL().ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, '9999_future.sql', 'x')`)
		db.Close()
		err = run(ctx, []string{"coachd", "migrate", "--db", dbPath}, getenvFrom(nil), out, out)
		if err == nil || !strings.Contains(err.Error(), "newer than this coachd") {
			t.Fatalf("newer schema: %v", err)
		}
	})
	t.Run("HelpEverywhere", func(t *testing.T) {
		for _, cmd := range [][]string{{"pack", "validate", "-h"}, {"pack", "-h"}, {"users", "create", "-h"}, {"review", "-h"},
			{"autobuild", "-h"}, {"doctor", "-h"}, {"migrate", "-h"}, {"serve", "-h"}, {"chat", "-h"}, {"fake-anthropic", "-h"}} {
			out := &syncBuffer{}
			if err := run(ctx, append([]string{"coachd"}, cmd...), getenvFrom(nil), out, out); err != nil || !strings.Contains(out.String(), "Usage") {
				t.Errorf("%v: %v\n%s", cmd, err, out)
			}
		}
	})
	t.Run("ReplayChecked", func(t *testing.T) {
		out := &syncBuffer{}
		err := run(ctx, []string{"coachd", "fake-anthropic", "--addr", "127.0.0.1:0", "--replay", filepath.Join(dir, "missing.sse")}, getenvFrom(nil), out, out)
		if err == nil || !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("missing replay: %v", err)
		}
	})
	t.Run("UsersCreateJSON", func(t *testing.T) {
		out := &syncBuffer{}
		if err := run(ctx, []string{"coachd", "users", "create", "--name", "ada", "--json", "--db", filepath.Join(dir, "u.db")}, getenvFrom(nil), out, out); err != nil {
			t.Fatal(err)
		}
		var u struct{ ID, Name, APIKey string }
		if err := json.Unmarshal([]byte(out.String()), &u); err != nil || !strings.HasPrefix(u.ID, "usr_") || u.Name != "ada" {
			t.Fatalf("%s: %v", out, err)
		}
		var k struct {
			Key string `json:"api_key"`
		}
		json.Unmarshal([]byte(out.String()), &k)
		if !strings.HasPrefix(k.Key, "ck_") {
			t.Fatalf("key: %s", out)
		}
	})
}

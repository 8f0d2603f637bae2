package datasource_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/datasource"
	"github.com/coachd/coachd/sqlstore"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

// TestSecurityDataSourceNotOwnStore: a pack's data source could name
// coachd's own database (its SQLite file has a known path, /data/coachd.db
// in the Docker image) and declare coachd's tables: users, sessions or
// messages read as shared tables showed every user's conversations to
// any user, and actions wrote to them. coachd's own tables are now a pack
// problem; an app table beside them (a database shared with coachd) is
// read as before.
func TestSecurityDataSourceNotOwnStore(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "coachd.db")
	store, err := sqlstore.Open(ctx, file, coachd.SystemClock{})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := store.CreateUser(ctx, &coachd.User{ID: coachd.NewID("usr", time.Now()), Name: "bob"}, strings.Repeat("ab", 32)); err != nil {
		t.Fatal(err)
	}
	store.Close()
	db, err := sql.Open("sqlite", file)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE events (id TEXT PRIMARY KEY, user_id TEXT NOT NULL, title TEXT)`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	load := func(tables string) error {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "data"), 0o755)
		os.WriteFile(filepath.Join(dir, "data", "app.yaml"), []byte("dsn: sqlite:"+file+"\ntables:\n"+tables), 0o644)
		set, err := datasource.Load(ctx, dir, []string{"data/app.yaml"}, func(string) string { return "" }, nil)
		if err == nil {
			set.Close()
		}
		return err
	}
	t.Run("ErrOwnTables", func(t *testing.T) {
		err := load("  users: {shared: true, columns: [id, name, api_key_hash]}\n  messages: {shared: true, columns: [id, session_id, content]}\n")
		if err == nil {
			t.Fatal("a data source declared coachd's own users and messages tables")
		}
		for _, want := range []string{
			"data/app.yaml:3: table users is coachd's own",
			"data/app.yaml:4: table messages is coachd's own",
		} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("missing %q in:\n%v", want, err)
			}
		}
	})
	t.Run("OKAppTableBeside", func(t *testing.T) {
		if err := load("  events: {scope: user_id, columns: [id, title]}\n"); err != nil {
			t.Fatal(err)
		}
	})
}

// TestSecurityDataSourceNotOwnStorePostgres: the same on Postgres, where
// coachd's store and an app's tables may share one database.
func TestSecurityDataSourceNotOwnStorePostgres(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	store, err := sqlstore.Open(ctx, dsn, coachd.SystemClock{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if err := store.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "data"), 0o755)
	os.WriteFile(filepath.Join(dir, "data", "app.yaml"), []byte("dsn: ${APP_DB}\ntables:\n  notes: {scope: user_id, columns: [id, content]}\n"), 0o644)
	_, err = datasource.Load(ctx, dir, []string{"data/app.yaml"}, func(string) string { return dsn }, nil)
	if err == nil || !strings.Contains(err.Error(), "data/app.yaml:3: table notes is coachd's own") {
		t.Fatalf("got %v", err)
	}
}

// TestOwnTablesListed: every table coachd's migrations create is in the
// list a data source may not declare.
func TestOwnTablesListed(t *testing.T) {
	re := regexp.MustCompile(`(?i)CREATE TABLE (?:IF NOT EXISTS )?([a-z_]+)|RENAME TO ([a-z_]+)`)
	for _, d := range []string{"sqlite", "postgres"} {
		files, _ := filepath.Glob(filepath.Join("..", "sqlstore", "migrations", d, "*.sql"))
		if len(files) == 0 {
			t.Fatalf("no %s migrations", d)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range re.FindAllStringSubmatch(string(b), -1) {
				name := strings.ToLower(m[1] + m[2])
				if !slices.Contains(datasource.OwnTables, name) {
					t.Errorf("%s creates %s, not in datasource.OwnTables", filepath.Base(f), name)
				}
			}
		}
	}
}

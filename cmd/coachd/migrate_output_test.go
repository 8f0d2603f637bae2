package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMigrateSaysWhatItApplied: coachd migrate printed the same line
// whether it upgraded the schema or found nothing to do, so an operator
// upgrading could not tell from its output that anything happened. It
// now names each migration it applied, or says the schema was up to date.
func TestMigrateSaysWhatItApplied(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	mustOldDB(t, path)
	files, _ := filepath.Glob(filepath.Join("..", "..", "sqlstore", "migrations", "sqlite", "*.sql"))
	last := filepath.Base(files[len(files)-1])
	if _, err := os.Stat(files[len(files)-1]); err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	if err := run(ctx, []string{"coachd", "migrate", "--db", path}, getenvFrom(nil), &out, &out); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, "applied "+last) || !strings.Contains(got, "1 migration applied") {
		t.Errorf("migrate on a schema one behind printed:\n%s", got)
	}
	var again syncBuffer
	if err := run(ctx, []string{"coachd", "migrate", "--db", path}, getenvFrom(nil), &again, &again); err != nil {
		t.Fatal(err)
	}
	if got := again.String(); strings.Contains(got, "applied") || !strings.Contains(got, "up to date") {
		t.Errorf("migrate with nothing to do printed:\n%s", got)
	}
}

// TestServeLogsMigrations: serve migrates at start, so in a rolling
// upgrade it is what changes the schema; its log said "database ready"
// and nothing of the migrations it had just applied. The line now names
// them.
func TestServeLogsMigrations(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	mustOldDB(t, path)
	files, _ := filepath.Glob(filepath.Join("..", "..", "sqlstore", "migrations", "sqlite", "*.sql"))
	last := filepath.Base(files[len(files)-1])
	p := MustServe(t, map[string]string{"COACHD_ADDR": "127.0.0.1:0"}, "--db", path)
	var line string
	for _, l := range strings.Split(p.stderr.String(), "\n") {
		if strings.Contains(l, `msg="database ready"`) {
			line = l
		}
	}
	if !strings.Contains(line, last) {
		t.Errorf("the start-up log does not name the migration applied (%s):\n%s", last, p.stderr)
	}
}

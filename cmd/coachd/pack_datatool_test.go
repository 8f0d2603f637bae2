package main

import (
	"bytes"
	"context"
	"database/sql"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// TestPackValidateDataToolClash: a named query or action whose name is
// taken (a built-in tool, or another data file's) is reported at its own
// data file and line. It was reported at the first data file, line 0,
// whichever file declared it.
func TestPackValidateDataToolClash(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"agents/coach.md": "---\nname: coach\ndescription: A coach.\n---\nYou coach.\n",
		"data/a.yaml":     "dsn: sqlite:app.db\ntables:\n  items: {scope: user_id, columns: [id, title]}\n",
		"data/b.yaml": "dsn: sqlite:app.db\ntables:\n  things: {scope: user_id, columns: [id, title]}\nqueries:\n" +
			"  save_note:\n    description: d\n    table: things\n",
	})
	raw, err := sql.Open("sqlite", filepath.Join(dir, "data", "app.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"CREATE TABLE items (id TEXT, user_id TEXT, title TEXT)", "CREATE TABLE things (id TEXT, user_id TEXT, title TEXT)"} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	var stdout bytes.Buffer
	if err := run(context.Background(), []string{"coachd", "pack", "validate", dir}, getenvFrom(nil), &stdout, io.Discard); err == nil {
		t.Fatal("a pack whose query takes a built-in tool's name validated")
	}
	if got, want := stdout.String(), `data/b.yaml:5: data tool "save_note" is already defined`; !strings.Contains(got, want) {
		t.Errorf("missing %q in:\n%s", want, got)
	}
}

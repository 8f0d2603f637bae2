package datasource_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/datasource"
)

// linkedDB makes a SQLite database at path with an events table.
func linkedDB(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE events (id TEXT, user_id TEXT)`); err != nil {
		t.Fatal(err)
	}
}

// A data file is read inside the pack directory, and a relative sqlite:
// path stays in it: no .. and no link leads out (a pack assembled from
// uploads must not open another database through one). An absolute path
// is the operator's choice of the app's database, as before, and a
// relative one may use .. while it stays in the pack.
func TestSecurityDataLinks(t *testing.T) {
	outside := t.TempDir()
	linkedDB(t, filepath.Join(outside, "app.db"))
	os.WriteFile(filepath.Join(outside, "app.yaml"), []byte("dsn: sqlite:"+filepath.Join(outside, "app.db")+
		"\ntables:\n  events: {scope: user_id, columns: [id]}\n"), 0o644)
	const tables = "\ntables:\n  events: {scope: user_id, columns: [id]}\n"
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string) // dir/data exists
		want  string                         // "" loads
	}{
		{"OK/Absolute", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "data", "app.yaml"), []byte("dsn: sqlite:"+filepath.Join(outside, "app.db")+tables), 0o644)
		}, ""},
		{"OK/DotDotInside", func(t *testing.T, dir string) {
			linkedDB(t, filepath.Join(dir, "app.db"))
			os.WriteFile(filepath.Join(dir, "data", "app.yaml"), []byte("dsn: sqlite:../app.db"+tables), 0o644)
		}, ""},
		{"OK/LinkInside", func(t *testing.T, dir string) {
			linkedDB(t, filepath.Join(dir, "app.db"))
			os.Symlink("../app.db", filepath.Join(dir, "data", "app.db"))
			os.WriteFile(filepath.Join(dir, "data", "app.yaml"), []byte("dsn: sqlite:app.db"+tables), 0o644)
		}, ""},
		{"ErrDotDotOut", func(t *testing.T, dir string) {
			rel, _ := filepath.Rel(filepath.Join(dir, "data"), filepath.Join(outside, "app.db"))
			os.WriteFile(filepath.Join(dir, "data", "app.yaml"), []byte("dsn: sqlite:"+rel+tables), 0o644)
		}, "data/app.yaml:1: dsn: app.db leads out of the pack directory"},
		{"ErrDBLinkOut", func(t *testing.T, dir string) {
			os.Symlink(filepath.Join(outside, "app.db"), filepath.Join(dir, "data", "app.db"))
			os.WriteFile(filepath.Join(dir, "data", "app.yaml"), []byte("dsn: sqlite:app.db"+tables), 0o644)
		}, "data/app.yaml:1: dsn: app.db leads out of the pack directory"},
		{"ErrDataFileLinkOut", func(t *testing.T, dir string) {
			os.Symlink(filepath.Join(outside, "app.yaml"), filepath.Join(dir, "data", "app.yaml"))
		}, "data/app.yaml:0: leads out of the pack directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.MkdirAll(filepath.Join(dir, "data"), 0o755)
			tc.setup(t, dir)
			set, err := datasource.Load(context.Background(), dir, []string{"data/app.yaml"}, func(string) string { return "" }, nil)
			if err == nil {
				set.Close()
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

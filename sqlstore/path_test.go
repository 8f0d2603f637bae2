package sqlstore

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/coachd/coachd"
)

// A file name with URI syntax in it opens that very file, not a truncated
// name shared with another.
func TestOddPath(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	for _, name := range []string{"a#1.db", "a#2.db", "b?x=1.db", "c%20d.db"} {
		db, err := Open(ctx, filepath.Join(dir, name), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		u := &coachd.User{Name: "u"}
		if err := db.CreateUser(ctx, u, "same-hash"); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		db.Close()
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

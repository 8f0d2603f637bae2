//go:build unix

package sqlstore

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/coachd/coachd"
)

// The database holds every user's conversations and notes: a file Open
// creates (and its WAL and shared-memory files) is readable by its owner
// alone, whatever the umask (022 under systemd and most shells); a file
// that exists keeps the mode its owner gave it.
func TestNewFileOwnerOnly(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	ctx := context.Background()
	path := filepath.Join(dir, "coachd.db")
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateUser(ctx, &coachd.User{Name: "u"}, "hash"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got&0o077 != 0 {
			t.Errorf("%s: mode %v, want no access for group and others", filepath.Base(p), got)
		}
	}

	t.Run("Existing", func(t *testing.T) {
		p := filepath.Join(dir, "shared.db")
		if err := os.WriteFile(p, nil, 0o640); err != nil {
			t.Fatal(err)
		}
		db, err := Open(ctx, p, nil)
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o640 {
			t.Fatalf("existing file: %v %v, want its mode 0640 kept", fi.Mode(), err)
		}
	})
}

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDatabasePathProblems: --db naming a directory, a file in a
// directory that does not exist, a file this process may not open, a
// file in a directory it may not write (SQLite makes its -wal and -shm
// files there) or a file on a read-only file system failed with SQLite's
// "unable to open database file (14)" or "attempt to write a readonly
// database (1544)", saying neither what was wrong nor with which file.
// Each now names the path and what to do. Run as root (whom modes do not
// stop), the binary runs as nobody.
func TestDatabasePathProblems(t *testing.T) {
	dir, err := os.MkdirTemp("", "coachd-dbpath-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "coachd")
	mustCopy(t, MustBinary(t), bin, 0o755)
	var cred *syscall.Credential
	owner := os.Getuid()
	if owner == 0 {
		owner = 65534 // nobody
		cred = &syscall.Credential{Uid: 65534, Gid: 65534}
	}
	mustMigrate := func(path string) {
		t.Helper()
		var out syncBuffer
		if err := run(context.Background(), []string{"coachd", "migrate", "--db", path}, getenvFrom(nil), &out, &out); err != nil {
			t.Fatalf("migrate %s: %v\n%s", path, err, out.String())
		}
	}

	// A directory where the file should be.
	isDir := filepath.Join(dir, "data")
	os.Mkdir(isDir, 0o755)
	// A file in a directory that is not there.
	noParent := filepath.Join(dir, "missing", "coachd.db")
	// A file owned by another user, private to them.
	locked := filepath.Join(dir, "locked.db")
	mustMigrate(locked)
	os.Chmod(locked, 0o600)
	if cred == nil {
		os.Chmod(locked, 0)
	}
	// A file this user owns in a directory it may not write.
	roDir := filepath.Join(dir, "ro")
	os.Mkdir(roDir, 0o755)
	inRODir := filepath.Join(roDir, "coachd.db")
	mustMigrate(inRODir)
	os.Remove(inRODir + "-wal")
	os.Remove(inRODir + "-shm")
	for _, p := range []string{roDir, inRODir} {
		if err := os.Chown(p, owner, owner); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(roDir, 0o555)

	cases := []struct {
		name, db string
		want     []string
	}{
		{"Directory", isDir, []string{isDir, "is a directory", filepath.Join(isDir, "coachd.db")}},
		{"NoParent", noParent, []string{filepath.Dir(noParent), "does not exist"}},
		{"NoAccess", locked, []string{locked, "permission denied"}},
		{"DirectoryReadOnly", inRODir, []string{roDir, "not writable", "-wal"}},
	}
	// A read-only file system, where one can be mounted (root).
	if os.Geteuid() == 0 {
		mnt := filepath.Join(dir, "mnt")
		os.Mkdir(mnt, 0o755)
		if err := syscall.Mount("tmpfs", mnt, "tmpfs", syscall.MS_RDONLY, ""); err == nil {
			t.Cleanup(func() { syscall.Unmount(mnt, 0) })
			cases = append(cases, struct {
				name, db string
				want     []string
			}{"ReadOnlyFileSystem", filepath.Join(mnt, "coachd.db"), []string{filepath.Join(mnt, "coachd.db"), "read-only file system"}})
		} else {
			t.Logf("no read-only file system to try: %v", err)
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, cmdName := range []string{"migrate", "serve"} {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				cmd := exec.CommandContext(ctx, bin, cmdName, "--db", c.db, "--addr", "127.0.0.1:0")
				if cmdName == "migrate" {
					cmd = exec.CommandContext(ctx, bin, cmdName, "--db", c.db)
				}
				cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
				out, err := cmd.CombinedOutput() // serve must not start: its output ends
				cancel()
				s := string(out)
				if err == nil || strings.Contains(s, "listening") {
					t.Fatalf("%s --db %s: started (%v)\n%s", cmdName, c.db, err, s)
				}
				last := s[strings.LastIndex(strings.TrimSuffix(s, "\n"), "\n")+1:]
				for _, w := range c.want {
					if !strings.Contains(last, w) {
						t.Errorf("%s: the error does not say %q:\n%s", cmdName, w, last)
					}
				}
				for _, cryptic := range []string{"(14)", "(1544)", "unable to open database file"} {
					if strings.Contains(last, cryptic) {
						t.Errorf("%s: the error is SQLite's %q:\n%s", cmdName, cryptic, last)
					}
				}
			}
		})
	}
}

package sqlstore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/coachd/coachd"
)

// sqlitePathError says why the SQLite file at path could not be opened,
// created or written, naming the path and what to do, when the
// file system shows it: SQLite's own "unable to open database file (14)"
// says neither, and is left out. nil when nothing is found.
func sqlitePathError(path string) error {
	if e := sqlitePathProblem(path); e != nil {
		return e
	}
	return nil
}

func sqlitePathProblem(path string) *coachd.Error {
	dir := filepath.Dir(path)
	uid := os.Getuid()
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return coachd.Errorf(coachd.EINVALID, "%s is a directory, not a SQLite file: name a file in it, such as %s", path, filepath.Join(path, "coachd.db"))
	case errors.Is(err, fs.ErrNotExist):
		if di, derr := os.Stat(dir); derr != nil || !di.IsDir() {
			return coachd.Errorf(coachd.EINVALID, "cannot create %s: directory %s does not exist: create it (mkdir -p %s) or choose another path", path, dir, dir)
		}
		return writableDir(path, dir, uid)
	case err != nil:
		return coachd.Errorf(coachd.EINVALID, "cannot reach %s: %v: check the path and its directories' permissions", path, unwrapPath(err))
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		if errors.Is(err, syscall.EROFS) {
			return coachd.Errorf(coachd.EINVALID, "%s is on a read-only file system: mount it read-write or choose another path", path)
		}
		if _, rerr := os.Open(path); rerr != nil {
			return coachd.Errorf(coachd.EINVALID, "cannot read %s (uid %d): %v: make the file its owner's (chown) with mode 0600, or run coachd as its owner", path, uid, unwrapPath(rerr))
		}
		return coachd.Errorf(coachd.EINVALID, "cannot write %s (uid %d; read-only): %v: make it writable by its owner (chmod 600), or run coachd as its owner", path, uid, unwrapPath(err))
	}
	f.Close()
	return writableDir(path, dir, uid)
}

// writableDir reports a directory the file at path cannot be created in,
// nor its -wal and -shm files beside it, which SQLite makes on opening.
func writableDir(path, dir string, uid int) *coachd.Error {
	f, err := os.CreateTemp(dir, ".coachd-probe-*")
	if err == nil {
		f.Close()
		os.Remove(f.Name())
		return nil
	}
	if errors.Is(err, syscall.EROFS) {
		return coachd.Errorf(coachd.EINVALID, "%s is on a read-only file system: mount it read-write or choose another path", path)
	}
	return coachd.Errorf(coachd.EINVALID, "directory %s is not writable by coachd (uid %d): %v: SQLite makes %s-wal and %s-shm beside the file; make the directory writable (chown, chmod)",
		dir, uid, unwrapPath(err), filepath.Base(path), filepath.Base(path))
}

// unwrapPath is the OS's reason alone, without the path it already names.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

package review

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/coachd/coachd"
)

// ScratchMaxAge is how long autobuild keeps a scratch copy for its
// caller to inspect: each run first removes its scratch directory's
// copies last changed longer ago, so that copies do not pile up.
const ScratchMaxAge = 7 * 24 * time.Hour

// scratchPrefix begins the name of each scratch copy autobuild makes.
const scratchPrefix = "coachd-autobuild-"

// pruneScratch removes the scratch copies in scratch last changed before
// cutoff: only directories named as autobuild names its copies, never a
// symbolic link (nor what it points to; os.RemoveAll follows none), nor
// the one that holds keep (the workspace being built from). It returns
// how many it removed.
func pruneScratch(scratch string, cutoff time.Time, keep string) (int, error) {
	entries, err := os.ReadDir(scratch)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), scratchPrefix) || e.Type()&fs.ModeType != fs.ModeDir {
			continue
		}
		info, err := e.Info() // lstat: the entry itself
		if err != nil || !info.IsDir() || !info.ModTime().Before(cutoff) {
			continue
		}
		if rel, err := filepath.Rel(filepath.Join(scratch, e.Name()), keep); err == nil && filepath.IsLocal(rel) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(scratch, e.Name())); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// SharedAbove says why a workspace is not private, or nil: a review's or
// a build's tests run in it and read what they find in the directories
// above (privateDir), where another user could leave a conftest.py, a
// node_modules or a go.mod. Unlike the scratch directory's, a workspace's
// is a warning: a repository under /tmp is an everyday thing.
func SharedAbove(dir string) error {
	_, err := privateDir(dir, "the workspace")
	return err
}

// privateDir resolves dir and checks that neither it nor any directory
// above it can be written by another user: the tests' runners read what
// they find in the directories above the one they run in (npm test runs
// the first node_modules/.bin/jest going up, node resolves modules from
// every node_modules above, pytest reads pytest.ini and conftest.py from
// above, go a go.mod), and in a directory like /tmp anyone may leave one.
func privateDir(dir, what string) (string, error) {
	real, err := filepath.Abs(dir)
	if err == nil {
		real, err = filepath.EvalSymlinks(real)
	}
	if err != nil {
		return "", coachd.Errorf(coachd.EINVALID, "%s: %v", what, err)
	}
	for d := real; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return "", err
		}
		st, _ := fi.Sys().(*syscall.Stat_t)
		switch {
		case fi.Mode().Perm()&0o022 != 0:
			return "", coachd.Errorf(coachd.EINVALID, "%s %s is not private: %s may be written by other users (mode %v), who could leave files there that the tests would read; use a directory only you can write to", what, dir, d, fi.Mode())
		case st != nil && st.Uid != 0 && int(st.Uid) != os.Geteuid():
			return "", coachd.Errorf(coachd.EINVALID, "%s %s is not private: %s belongs to another user (uid %d)", what, dir, d, st.Uid)
		}
		if filepath.Dir(d) == d {
			return real, nil
		}
	}
}

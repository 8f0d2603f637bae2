package review

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ScratchMaxAge is how long autobuild keeps a scratch copy for its
// caller to inspect: each run first removes its scratch directory's
// copies last changed longer ago, so that copies do not pile up.
const ScratchMaxAge = 7 * 24 * time.Hour

// scratchPrefix begins the name of each scratch copy autobuild makes.
const scratchPrefix = "coachd-autobuild-"

// pruneScratch removes the scratch copies in scratch last changed before
// cutoff: only directories named as autobuild names its copies, never a
// symbolic link (nor what it points to; os.RemoveAll follows none). It
// returns how many it removed.
func pruneScratch(scratch string, cutoff time.Time) (int, error) {
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
		if err := os.RemoveAll(filepath.Join(scratch, e.Name())); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

package review

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"syscall"
)

// Bounds of a tree's manifest: autobuild reads the scratch copy whole
// before the player's first turn and after each one. The copy starts
// within maxCopyFiles and maxCopyBytes; the player may grow it.
const (
	maxManifestFiles = 2 * maxCopyFiles
	maxManifestBytes = 2 * maxCopyBytes
)

// manifest is a tree's entries by slash-separated path: a regular file's
// SHA-256, a symbolic link's target, another type's mode. The tree's own
// repository (.git at its root) is left out: git's bookkeeping is not
// the change.
type manifest map[string]string

// errManifestSize is treeManifest's error past its bounds.
var errManifestSize = fmt.Errorf("over %d files or %d MiB", maxManifestFiles, maxManifestBytes>>20)

// treeManifest reads the manifest of the tree at dir, through os.Root (no
// link is followed). Nothing is opened that would block: a named pipe is
// recorded by its mode.
func treeManifest(dir string) (manifest, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	m := manifest{}
	var total int64
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == ".git" {
			return fs.SkipDir
		}
		if p == "." || d.IsDir() {
			return nil
		}
		if len(m) >= maxManifestFiles {
			return errManifestSize
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			to, err := root.Readlink(p)
			if err != nil {
				return err
			}
			m[p] = "link:" + to
			return nil
		case !d.Type().IsRegular():
			m[p] = "mode:" + d.Type().String()
			return nil
		}
		f, err := root.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
			m[p] = "mode:changed"
			return nil
		}
		h := sha256.New()
		n, err := io.Copy(h, io.LimitReader(f, maxManifestBytes-total+1))
		if total += n; total > maxManifestBytes {
			return errManifestSize
		}
		if err != nil {
			return err
		}
		m[p] = hex.EncodeToString(h.Sum(nil))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// changedSince are the paths of m that differ from before: changed,
// added or removed. Sorted.
func (m manifest) changedSince(before manifest) []string {
	var paths []string
	for p, sum := range m {
		if before[p] != sum {
			paths = append(paths, p)
		}
	}
	for p := range before {
		if _, ok := m[p]; !ok {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	return paths
}

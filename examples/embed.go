// Package examples holds the example coach packs; the autobuild pack is
// embedded so that `coachd review` and `coachd autobuild` work without
// --pack.
package examples

import (
	"embed"
	"io/fs"
	"os"
	"path/filepath"
)

//go:embed autobuild/agents
var autobuild embed.FS

// WriteAutobuild writes the autobuild pack (its agents) into a new
// directory under tmp ("" is the system's) and returns it.
func WriteAutobuild(tmp string) (string, error) {
	dir, err := os.MkdirTemp(tmp, "coachd-autobuild-pack-")
	if err != nil {
		return "", err
	}
	err = fs.WalkDir(autobuild, "autobuild", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(p[len("autobuild"):]))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := autobuild.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	return dir, err
}

package review

import (
	"context"
	"io"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Bounds of the changed packages' check.
const (
	maxReportFiles = 1000    // of the player's files_modified read
	maxGoMod       = 1 << 20 // bytes of a go.mod read for its module path
)

// changedPaths are the workspace paths the change under review touches:
// the files the player's report names (files), the ones autobuild saw
// the player change (seen: Request.Changed) and, in a git workspace,
// the Go, Python and JavaScript files git shows changed since the base or
// not tracked there, whatever the report says. Sorted, each once.
// tracked are those of git's that it tracks and shows changed.
// unknown says why git's list could not be read whole ("": it could).
func (w *Workspace) changedPaths(ctx context.Context, files, seen []string) (paths, tracked []string, unknown string) {
	git, diffed, unknown := w.gitChanged(ctx)
	for _, f := range slices.Concat(files[:min(len(files), maxReportFiles)], seen, git) {
		if p, err := rel(strings.TrimSpace(f)); err == nil && p != "." {
			paths = append(paths, p)
		}
	}
	for _, f := range diffed {
		if p, err := rel(strings.TrimSpace(f)); err == nil && p != "." {
			tracked = append(tracked, p)
		}
	}
	slices.Sort(paths)
	return slices.Compact(paths), tracked, unknown
}

// changedGoPackages are the import paths of the Go packages the change
// under review touches (paths: changedPaths): the directories of its .go
// files, each that still holds .go files and lies in a module of the
// workspace (its nearest go.mod). The directories go test ./... skips
// (testdata, vendor, names starting with . or _) are left out.
func (w *Workspace) changedGoPackages(paths []string) []string {
	dirs := map[string]bool{}
	for _, p := range paths {
		if strings.HasSuffix(p, ".go") {
			dirs[path.Dir(p)] = true
		}
	}
	var pkgs []string
	for d := range dirs {
		if goSkips(d) || !w.hasGo(d) {
			continue
		}
		if pkg := w.importPath(d); pkg != "" {
			pkgs = append(pkgs, pkg)
		}
	}
	slices.Sort(pkgs)
	return slices.Compact(pkgs)
}

// goSkips reports whether go test ./... leaves the directory d out.
func goSkips(d string) bool {
	for _, e := range strings.Split(d, "/") {
		if e == "testdata" || e == "vendor" || strings.HasPrefix(e, "_") || strings.HasPrefix(e, ".") && e != "." {
			return true
		}
	}
	return false
}

// hasGo reports whether the directory d holds a Go file.
func (w *Workspace) hasGo(d string) bool {
	entries, err := fs.ReadDir(w.root.FS(), d)
	if err != nil {
		return false
	}
	for _, e := range entries {
		n := e.Name()
		if e.Type().IsRegular() && strings.HasSuffix(n, ".go") && !strings.HasPrefix(n, ".") && !strings.HasPrefix(n, "_") {
			return true
		}
	}
	return false
}

// importPath is the import path of the package in directory d: the
// module path of the nearest go.mod at or above it in the workspace,
// joined with d's path below it; "" when there is none.
func (w *Workspace) importPath(d string) string {
	for dir := d; ; dir = path.Dir(dir) {
		if mod := w.modulePath(path.Join(dir, "go.mod")); mod != "" {
			below := strings.TrimPrefix(strings.TrimPrefix(d, dir), "/")
			if dir == "." {
				below = d
			}
			if below == "." || below == "" {
				return mod
			}
			return mod + "/" + below
		}
		if dir == "." {
			return ""
		}
	}
}

// modulePath reads the module path of the go.mod at p ("" if none).
func (w *Workspace) modulePath(p string) string {
	f, fi, err := w.open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	if !fi.Mode().IsRegular() {
		return ""
	}
	data, _ := io.ReadAll(io.LimitReader(f, maxGoMod))
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
			mod := strings.TrimSpace(rest)
			if i := strings.Index(mod, "//"); i >= 0 {
				mod = strings.TrimSpace(mod[:i])
			}
			if u, err := strconv.Unquote(mod); err == nil {
				mod = u
			}
			return mod
		}
	}
	return ""
}

package review

import (
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// suiteKinds are the changed files whose tests go test does not run:
// each wants a passing whole-suite run of its framework.
var suiteKinds = []struct {
	framework, what, run string
	exts                 []string
}{
	{"pytest", "Python files", "pytest over the whole suite", []string{".py"}},
	{"jest", "JavaScript or TypeScript files", "the package's tests (npm test, or jest with no test pattern)",
		[]string{".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts"}},
}

// suitePathspecs are suiteKinds' files as git pathspecs (gitChanged).
func suitePathspecs() []string {
	var specs []string
	for _, k := range suiteKinds {
		for _, e := range k.exts {
			specs = append(specs, "*"+e)
		}
	}
	return specs
}

// untestedSuites says, for each framework whose files the change touches
// (paths: changedPaths), what no passing whole-suite run of the review
// tested: "Python files (app/b.py, …)". A Python change is not tested
// by go test, nor by a pytest run of some of the tests (named files or
// node ids, -k, -m, --deselect, --lf): which of them exercise the code
// changed is not known, so all of them must pass. Likewise JavaScript
// and jest (a test pattern, -t, -o); a package script run with --prefix
// DIR (-C, --cwd, --dir) covers the files under DIR.
func (t *Trace) untestedSuites(paths []string) []string {
	t.mu.Lock()
	ws := t.ws
	t.mu.Unlock()
	if ws == nil {
		return nil
	}
	var runs []*CommandRun
	for _, r := range t.testRuns() {
		if r.Passed() {
			runs = append(runs, r)
		}
	}
	var missing []string
	for _, k := range suiteKinds {
		var files []string
		for _, p := range paths {
			if !slices.Contains(k.exts, path.Ext(p)) || vendored(p) || !ws.hasSuite(k.framework, p) {
				continue
			}
			covered := slices.ContainsFunc(runs, func(r *CommandRun) bool {
				dir, whole := wholeSuite(strings.Fields(r.Command))
				return r.Tests.Framework == k.framework && whole && (dir == "." || p == dir || strings.HasPrefix(p, dir+"/"))
			})
			if !covered {
				files = append(files, p)
			}
		}
		if len(files) > 0 {
			more := ""
			if len(files) > 5 {
				files, more = files[:5], ", …"
			}
			missing = append(missing, k.what+" ("+strings.Join(files, ", ")+more+"), which "+k.run+" tests")
		}
	}
	return missing
}

// hasSuite reports whether the changed file p can have framework's tests
// to run: JavaScript in a package (a package.json in its directory or one
// above it in the workspace), Python in a workspace with Python tests
// (a test_*.py, *_test.py or conftest.py, the first maxCopyFiles entries
// looked at). A Go module's embedded script, or a helper script where no
// Python is tested, is like a Go package without test files.
func (w *Workspace) hasSuite(framework, p string) bool {
	if framework == "jest" {
		for d := path.Dir(p); ; d = path.Dir(d) {
			if fi, err := w.root.Lstat(path.Join(d, "package.json")); err == nil && fi.Mode().IsRegular() {
				return true
			}
			if d == "." {
				return false
			}
		}
	}
	found, n := false, 0
	fs.WalkDir(w.root.FS(), ".", func(q string, d fs.DirEntry, err error) error {
		if n++; found || n > maxCopyFiles {
			return fs.SkipAll
		}
		if err != nil {
			return nil // an unreadable directory: the others are looked at
		}
		name := d.Name()
		if d.IsDir() {
			if q != "." && (vendored(q+"/x") || name == "venv") {
				return fs.SkipDir
			}
			return nil
		}
		found = name == "conftest.py" || strings.HasSuffix(name, ".py") && (strings.HasPrefix(name, "test_") || strings.HasSuffix(name, "_test.py"))
		return nil
	})
	return found
}

// vendored reports whether p is in a directory of installed or generated
// code (node_modules, a hidden one such as .venv, __pycache__), not the
// project's own.
func vendored(p string) bool {
	for _, e := range strings.Split(path.Dir(p), "/") {
		if e == "node_modules" || e == "__pycache__" || e == "venv" || strings.HasPrefix(e, ".") && e != "." {
			return true
		}
	}
	return false
}

// wholeSuite reports whether a pytest or jest command line runs all of
// its suite, and the workspace directory it runs in ("." but for a
// package script's --prefix, -C, --cwd or --dir).
func wholeSuite(argv []string) (dir string, whole bool) {
	dir = "."
	switch testFramework(argv) {
	case "pytest":
		args := argv[1:]
		if pythonName.MatchString(filepath.Base(argv[0])) { // python -m pytest: pytest's args follow
			for i, a := range args {
				if strings.HasPrefix(a, "-m") {
					if a == "-m" {
						i++
					}
					args = args[i+1:]
					break
				}
			}
		}
		for _, a := range args {
			name, _, _ := strings.Cut(a, "=")
			switch {
			case slices.Contains([]string{"-k", "-m", "--deselect", "--lf", "--last-failed", "--sw", "--stepwise", "--ignore", "--ignore-glob"}, name),
				len(a) > 2 && (strings.HasPrefix(a, "-k") || strings.HasPrefix(a, "-m")) && a[1] != '-':
				return dir, false // a selection of the tests
			case !strings.HasPrefix(a, "-") && (strings.HasSuffix(a, ".py") || strings.Contains(a, "::")):
				return dir, false // test files or node ids
			}
		}
		return dir, true
	case "jest":
	default:
		return dir, false
	}
	args := argv[1:]
	switch name := filepath.Base(argv[0]); name {
	case "npm", "yarn", "pnpm":
		// The package manager's own flags, then the script.
		for i := 0; i < len(args); i++ {
			a := args[i]
			if slices.Contains([]string{"--prefix", "-C", "--cwd", "--dir"}, a) && i+1 < len(args) {
				if p, err := rel(args[i+1]); err == nil {
					dir = p
				} else {
					return dir, false
				}
				i++
				continue
			}
			if strings.HasPrefix(a, "-") {
				continue
			}
			if a == "run" || a == "run-script" {
				i++
			}
			args = args[i+1:]
			break
		}
	case "npx", "node":
		for i, a := range args { // up to jest itself
			if b := filepath.Base(a); b == "jest" || b == "jest.js" || strings.HasPrefix(a, "jest@") {
				args = args[i+1:]
				break
			}
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, _ := strings.Cut(a, "=")
		switch {
		case a == "--":
		case slices.Contains([]string{"-c", "--config", "-w", "--maxWorkers", "--testTimeout", "--reporters", "--coverageProvider"}, a):
			i++ // its value
		case slices.Contains([]string{"-t", "--testNamePattern", "-o", "--onlyChanged", "--findRelatedTests", "--testPathPattern",
			"--testPathPatterns", "--lastCommit", "--changedSince", "--selectProjects", "--shard"}, name):
			return dir, false
		case !strings.HasPrefix(a, "-"):
			return dir, false // a test path pattern
		}
	}
	return dir, true
}
